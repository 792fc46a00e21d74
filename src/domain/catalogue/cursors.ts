import type { CreatedKey } from '../../db/repositories/events.js';
import { decodeCursor, encodeCursor } from '../pagination/cursor.js';

/**
 * Cursors of the native lists ordered newest first: the last row's creation time (text to the
 * microsecond, as the database gives it) and id. An absent or empty cursor starts at the first page.
 */
export const createdCursor = {
  encode(collection: string, createdAt: string, id: string | number): string {
    return encodeCursor(collection, [createdAt, Number(id)]);
  },
  decode(collection: string, cursor: string | undefined): CreatedKey | undefined {
    if (cursor === undefined || cursor === '') return undefined;
    const [createdAt, id] = decodeCursor(collection, cursor, ['timestamp', 'integer']);
    return { createdAt: createdAt as string, id: id as number };
  },
};
