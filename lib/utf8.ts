/** UTF-8 sizes of strings without encoding them (no allocation on hot paths). */

/**
 * The length of `s` in UTF-8, exactly as TextEncoder encodes it: a surrogate pair is 4 bytes and a
 * lone surrogate becomes U+FFFD (3 bytes).
 */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}
