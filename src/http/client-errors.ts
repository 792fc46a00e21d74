import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_BY_CODE, type ErrorCode } from '../presenters/errors.js';

/** Node's parser errors, answered with the error envelope (Node's own answers have no body). */
const ANSWERS: Record<string, [ErrorCode, string, string]> = {
  HPE_HEADER_OVERFLOW: ['header_fields_too_large', 'Request Header Fields Too Large', 'the request line and headers exceed 64 KiB'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'Request Timeout', 'the request did not arrive in time'],
};

/**
 * Requests Node refuses before Koa sees them (a header block over the limit: 431; a request not received
 * within the server's request timeout: 408; anything it cannot parse: 400) get the JSON error envelope.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's own handler: answer only if no response has started on this socket.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [code, reason, message] = ANSWERS[error.code ?? ''] ?? (['invalid_request', 'Bad Request', 'malformed HTTP request'] as const);
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${STATUS_BY_CODE[code]} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
