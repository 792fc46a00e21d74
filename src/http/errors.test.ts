import { describe, expect, it } from 'vitest';
import { isDatabaseUnreachable } from './errors.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnreachable', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a refused connection on every address', new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], '')],
    ['a connection cut', new Error('Connection terminated unexpectedly')],
    ['a client whose connection failed', new Error('Client has encountered a connection error and is not queryable')],
    ['no connection from the pool in time', Object.assign(new Error('Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' })],
    ['a server shutting down', withCode('terminating connection due to administrator command', '57P01')],
    ['a server recovering from a crash', withCode('the database system is in recovery mode', '57P03')],
    ['a connection exception', withCode('connection failure', '08006')],
    ['a cause of any of these', new Error('query failed', { cause: withCode('read ECONNRESET', 'ECONNRESET') })],
  ])('is true of %s', (_, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', withCode('syntax error at or near "selec"', '42601')],
    ['a plain error', new Error('something else')],
    ['a thrown string', 'ECONNREFUSED'],
  ])('is false of %s', (_, error) => {
    expect(isDatabaseUnreachable(error)).toBe(false);
  });
});
