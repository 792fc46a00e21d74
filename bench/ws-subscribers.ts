/**
 * A worker thread of bench:ws: `count` WebSocket subscribers of the feed at `url`, each subscribed to the
 * channels of one market. For every order-book delta and trade received while measuring, the delay is the
 * time of receipt minus the message's `ts`; every subscription's `seq` is checked for gaps.
 */
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';

export type SubscribersData = { url: string; ticker: string; count: number; channels: string[] };

export type SubscribersCommand = 'connect' | 'measure' | 'stop';

export type SubscribersResult = { delays: number[]; gaps: number; errors: string[] };

const { url, ticker, count, channels } = workerData as SubscribersData;
const sockets: WebSocket[] = [];
const result: SubscribersResult = { delays: [], gaps: 0, errors: [] };
let measuring = false;
let stopping = false;

function connect(): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const seqs = new Map<number, number>();
    let pending = channels.length;
    ws.on('message', (data) => {
      const text = (data as Buffer).toString();
      const m = JSON.parse(text) as { type: string; sid?: number; seq?: number; msg: { sid?: number; ts?: string } };
      if (m.type === 'subscribed') {
        seqs.set(m.msg.sid!, 0);
        if (--pending === 0) resolve();
      } else if (m.type === 'error') result.errors.push(text);
      else {
        if (m.seq !== undefined) {
          if (m.seq !== (seqs.get(m.sid!) ?? 0) + 1) result.gaps++;
          seqs.set(m.sid!, m.seq);
        }
        if (measuring && (m.type === 'orderbook_delta' || m.type === 'trade')) result.delays.push(Date.now() - Date.parse(m.msg.ts!));
      }
    });
    ws.on('open', () => ws.send(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels, market_tickers: [ticker] } })));
    ws.on('error', reject);
    ws.on('close', (code) => stopping || result.errors.push(`closed ${code}`));
    sockets.push(ws);
  });
}

async function answer(command: SubscribersCommand): Promise<void> {
  try {
    if (command === 'connect') for (let i = 0; i < count; i++) await connect();
    measuring = command === 'measure';
    if (command === 'stop') {
      stopping = true;
      for (const ws of sockets) ws.close();
    }
    parentPort!.postMessage({ ok: true, result });
  } catch (error) {
    parentPort!.postMessage({ ok: false, error: String((error as Error).stack ?? error) });
  }
}

// (answer catches every error and posts it back)
parentPort!.on('message', (command: SubscribersCommand) => void answer(command));
