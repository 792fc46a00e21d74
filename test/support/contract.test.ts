import { describe, expect, it } from 'vitest';
import { ContractChecker } from './contract.js';

/** The checker every integration test relies on must itself catch each kind of mismatch. */
describe('ContractChecker', () => {
  const checker = new ContractChecker();
  const user = { id: 'u1', email: 'a@b.co', name: '', username: 'a', role: 'USER' };
  const json = 'application/json';

  it('accepts a documented response', () => {
    expect(checker.check({ method: 'GET', path: '/api/auth/me' }, { status: 200, contentType: json, body: { user } })).toEqual([]);
  });

  it('catches a field of the wrong type', () => {
    const problems = checker.check({ method: 'GET', path: '/healthz' }, { status: 200, contentType: json, body: { status: 'ok', database: 42 } });
    expect(problems.join('\n')).toMatch(/body\/database must be string/);
  });

  it('catches a missing field, an extra field and a wrong enum value', () => {
    expect(checker.check({ method: 'GET', path: '/api/auth/me' }, { status: 200, contentType: json, body: { user: { ...user, role: undefined } } })).not.toEqual([]);
    expect(checker.check({ method: 'GET', path: '/api/auth/me' }, { status: 200, contentType: json, body: { user: { ...user, password: 'x' } } })).not.toEqual([]);
    expect(checker.check({ method: 'GET', path: '/api/auth/me' }, { status: 200, contentType: json, body: { user: { ...user, role: 'ROOT' } } })).not.toEqual([]);
  });

  it('catches an undocumented status, a wrong media type and a body outside the error envelope', () => {
    expect(checker.check({ method: 'GET', path: '/api/auth/me' }, { status: 500, contentType: json, body: {} })).toEqual([
      'GET /api/auth/me -> 500: status 500 is not documented for getCurrentAccount',
    ]);
    expect(checker.check({ method: 'GET', path: '/api/auth/me' }, { status: 200, contentType: 'text/plain', body: '' })[0]).toMatch(/content type 'text\/plain'/);
    expect(checker.check({ method: 'GET', path: '/api/auth/me' }, { status: 401, contentType: json, body: { message: 'no' } })).not.toEqual([]);
    expect(checker.check({ method: 'GET', path: '/nowhere' }, { status: 404, contentType: json, body: { error: 'x' } })).not.toEqual([]);
  });

  it('accepts nullable fields only where the document allows null', () => {
    const page = { cursor: null, accounts: [] };
    expect(checker.check({ method: 'GET', path: '/api/admin/accounts' }, { status: 200, contentType: json, body: page })).toEqual([]);
    expect(checker.check({ method: 'GET', path: '/api/admin/accounts' }, { status: 200, contentType: json, body: { cursor: 1, accounts: null } })).not.toEqual([]);
  });
});
