import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** pino's own exit hook (on-exit-leak-free): runs registered flushes on exit without keeping the objects alive. */
const onExit = createRequire(import.meta.url)('on-exit-leak-free') as {
  register<T extends object>(object: T, flush: (object: T) => void): void;
};

/** A sonic-boom file in contentMode 'buffer' (its types only know strings). */
interface BufferFile {
  write(data: Buffer): boolean;
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
}

/** Bytes of UTF-8 a UTF-16 code unit takes at most. */
const UTF8_PER_UNIT = 3;
const CHUNK_BYTES = 16 * 1024;

/**
 * The lines logged during one turn of the event loop, handed to the file as one buffer when the turn ends
 * (setImmediate): one write per turn instead of one per line (the access log's lines come in batches, see
 * AccessLog), each write costing more than formatting a line; sonic-boom's own batching (minLength)
 * re-measures its whole buffer on every line, which costs as much. Each line is encoded as it comes, while
 * its freshly concatenated string is still in the cache: a turn's lines kept as one string were flattened
 * and measured at the end of the turn, their pieces scattered over the heap by then (about 1 µs a line).
 */
export class TurnBatch implements DestinationStream {
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private length = 0;

  constructor(private readonly file: BufferFile) {
    // on exit (after pino's flush of the file): what this turn logged
    onExit.register(this, (batch) => batch.flushSync());
  }

  write(line: string): void {
    if (this.length === 0) setImmediate(this.handOver);
    const needed = this.length + line.length * UTF8_PER_UNIT;
    if (needed > this.chunk.length) {
      const larger = Buffer.allocUnsafe(Math.max(needed, 2 * this.chunk.length));
      this.chunk.copy(larger, 0, 0, this.length);
      this.chunk = larger;
    }
    this.length += this.chunk.write(line, this.length);
  }

  /** pino's logger.flush(). */
  flush(callback?: (error?: Error) => void): void {
    this.handOver();
    this.file.flush(callback);
  }

  flushSync(): void {
    if (this.length === 0) return;
    this.handOver();
    this.file.flushSync();
  }

  private readonly handOver = (): void => {
    if (this.length === 0) return;
    // a copy: the file may keep it queued while this turn's chunk is reused
    const lines = Buffer.from(this.chunk.subarray(0, this.length));
    this.length = 0;
    // a chunk grown for one turn's exceptional output is not kept
    if (this.chunk.length > 64 * CHUNK_BYTES) this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.file.write(lines);
  };
}

/**
 * Where logs go by default: stdout, one write per event-loop turn (TurnBatch), synchronous. An
 * asynchronous write costs a thread-pool round trip (several µs of the event loop on a VM, and a thread
 * taking turns on the cores), more than the write itself; and synchronous writes keep what was logged in
 * order to the end: at exit, an asynchronous write still in flight could be overtaken or lost. A
 * destination that stops reading (a full pipe) holds the process up rather than logs piling up in memory.
 */
export function logDestination(dest: number | string = 1): DestinationStream {
  return new TurnBatch(pino.destination({ dest, sync: true, contentMode: 'buffer' }) as unknown as BufferFile);
}

const CENSOR = '[redacted]';
const NAMED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'password', 'token'];

let timeMs = 0;
let timeField = '';

/** pino's epochTime (`,"time":` and Date.now()), its string built once a millisecond, which a busy server logs many lines in. */
function epochTime(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeField = `,"time":${now}`;
  }
  return timeField;
}

/** Structured JSON logs. Credentials never reach them: these paths are censored wherever they appear. */
export function createLogger(level: string, destination: DestinationStream = logDestination()): Logger {
  return pino({ level, timestamp: epochTime, redact: { paths: [...NAMED_PATHS, '*.password', '*.token'], censor: CENSOR } }, destination);
}

/** The fields of an access-log line: fixed primitives, never a header or a body. */
export interface AccessRecord {
  requestId: string;
  /** The W3C trace id: the caller's traceparent's, or a new one. */
  traceId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  /** The peer's address (the socket's: proxies are not trusted). */
  client: string | undefined;
  /** The account of an authenticated request. */
  accountId: string | undefined;
  /** The API key a signed request was accepted with. */
  apiKeyId?: string | undefined;
}

/** Text that goes into a JSON string as it is: printable ASCII but the quote and the backslash. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function jsonText(text: string): string {
  return PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * The line pino writes for `logger.info(record, 'request')` (level `level`, time `time`, the logger's
 * `bindings`), its fields in the record's order and those undefined left out.
 */
export function accessLine(level: number, time: number, bindings: string, record: AccessRecord): string {
  const { client, accountId, apiKeyId } = record;
  let line = `{"level":${level},"time":${time}${bindings},"requestId":${jsonText(record.requestId)},"traceId":${jsonText(record.traceId)},"method":${jsonText(record.method)},"path":${jsonText(record.path)},"status":${record.status},"ms":${record.ms}`;
  if (client !== undefined) line += `,"client":${jsonText(client)}`;
  if (accountId !== undefined) line += `,"accountId":${jsonText(accountId)}`;
  if (apiKeyId !== undefined) line += `,"apiKeyId":${jsonText(apiKeyId)}`;
  return `${line},"msg":"request"}\n`;
}

/** How long access-log lines wait to be formatted and written with those that follow them. */
export const ACCESS_LOG_DELAY_MS = 10;

/**
 * The one-line-per-request access log (message "request"), written to the logger's destination at its
 * info level. Its fields are fixed primitives, never a header or a body, so its lines are formatted here
 * (accessLine), not by pino's general serializer, which looks at every field's type, escapes strings a
 * character at a time and runs the redaction paths: about 1 µs of CPU a line more, half of what a line
 * costs in all with its encoding and writing.
 *
 * Lines are formatted and handed to the destination together, ACCESS_LOG_DELAY_MS after the first of them:
 * a busy server answers one request or two per event-loop turn, and a write (a system call) and a
 * scheduled callback per turn cost about 1 µs a request more. Each line keeps the time of its request's
 * end; lines logged otherwise in the meantime come before it. Lines still pending are written when the
 * process exits.
 */
export class AccessLog {
  private readonly stream: DestinationStream;
  private readonly bindings: string;
  private readonly level: number;
  private times: number[] = [];
  private records: AccessRecord[] = [];

  /** `logger` from createLogger (or a child of it): its level, bindings and destination. */
  constructor(private readonly logger: Logger) {
    const internals = logger as unknown as Record<symbol, unknown>;
    this.stream = internals[pino.symbols.streamSym] as DestinationStream;
    this.bindings = internals[pino.symbols.chindingsSym] as string;
    this.level = logger.levels.values.info!;
    // on exit: the pending lines, then the destination's (as its own exit hook may already have run)
    onExit.register(this, (log) => {
      log.formatPending();
      (log.stream as { flushSync?: () => void }).flushSync?.();
    });
  }

  get enabled(): boolean {
    return this.logger.isLevelEnabled('info');
  }

  write(record: AccessRecord): void {
    if (this.records.length === 0) setTimeout(this.formatPending, ACCESS_LOG_DELAY_MS).unref();
    this.times.push(Date.now());
    this.records.push(record);
  }

  private readonly formatPending = (): void => {
    const { times, records } = this;
    if (records.length === 0) return;
    this.times = [];
    this.records = [];
    for (let i = 0; i < records.length; i += 1) this.stream.write(accessLine(this.level, times[i]!, this.bindings, records[i]!));
  };
}
