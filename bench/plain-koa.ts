/**
 * Plain Koa answering a constant JSON, in a process of its own (forked by bench/dispatch.ts, as the service
 * runs in one): sends { port } once it listens; ends with its parent.
 */
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

const server = new Koa()
  .use((ctx) => {
    ctx.body = { id: 'list', ok: true };
  })
  .listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
// keep-alive across the whole run, as the load generator's connections expect
server.keepAliveTimeout = 60_000;
process.on('disconnect', () => process.exit(0));
