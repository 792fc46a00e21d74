/**
 * Query values given repeated (`?id=1&id=2`), comma-separated (`?id=1,2`) or both, as one list.
 * Also merges a parameter's aliases (`tag_id` and `tagId`): pass every spelling's value.
 */
export function listValues(...values: Array<string | string[] | undefined>): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (value === undefined) continue;
    for (const part of (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(','))) {
      const trimmed = part.trim();
      if (trimmed !== '' && !out.includes(trimmed)) out.push(trimmed);
    }
  }
  return out;
}

/** The first defined value among a parameter's spellings. */
export function firstOf<T>(...values: Array<T | undefined>): T | undefined {
  return values.find((v) => v !== undefined);
}
