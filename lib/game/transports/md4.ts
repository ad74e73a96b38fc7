/**
 * MD4 (RFC 1320) and HMAC-MD4 (RFC 2104 over MD4), which DarkPlaces' secure rcon signs commands with
 * (docs/game-consoles.md §2.8). Neither WebCrypto nor OpenSSL 3's default provider has MD4, so it is here: small,
 * and checked against the RFC's test vectors. MD4 is broken as a hash; this is only for speaking that protocol.
 */

const BLOCK = 64;

/** The MD4 digest (16 bytes) of `data`. */
export function md4(data: Uint8Array): Uint8Array {
  // Padding: 0x80, zeros to 56 mod 64, then the length in bits as a 64-bit little-endian number.
  const padded = new Uint8Array((((data.length + 8) >> 6) + 1) * BLOCK);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bits = data.length * 8;
  view.setUint32(padded.length - 8, bits >>> 0, true);
  view.setUint32(padded.length - 4, Math.floor(bits / 2 ** 32), true);

  let a = 0x67452301;
  let b = 0xefcdab89;
  let c = 0x98badcfe;
  let d = 0x10325476;
  const x = new Uint32Array(16);
  const rotl = (v: number, s: number) => (v << s) | (v >>> (32 - s));
  const f = (p: number, q: number, r: number) => (p & q) | (~p & r);
  const g = (p: number, q: number, r: number) => (p & q) | (p & r) | (q & r);
  const h = (p: number, q: number, r: number) => p ^ q ^ r;

  for (let off = 0; off < padded.length; off += BLOCK) {
    for (let i = 0; i < 16; i++) x[i] = view.getUint32(off + i * 4, true);
    const [aa, bb, cc, dd] = [a, b, c, d];
    // Round 1: [abcd k s] a = (a + F(b,c,d) + X[k]) <<< s
    for (const k of [0, 4, 8, 12]) {
      a = rotl((a + f(b, c, d) + x[k]!) | 0, 3);
      d = rotl((d + f(a, b, c) + x[k + 1]!) | 0, 7);
      c = rotl((c + f(d, a, b) + x[k + 2]!) | 0, 11);
      b = rotl((b + f(c, d, a) + x[k + 3]!) | 0, 19);
    }
    // Round 2: a = (a + G(b,c,d) + X[k] + 5A827999) <<< s
    for (const k of [0, 1, 2, 3]) {
      a = rotl((a + g(b, c, d) + x[k]! + 0x5a827999) | 0, 3);
      d = rotl((d + g(a, b, c) + x[k + 4]! + 0x5a827999) | 0, 5);
      c = rotl((c + g(d, a, b) + x[k + 8]! + 0x5a827999) | 0, 9);
      b = rotl((b + g(c, d, a) + x[k + 12]! + 0x5a827999) | 0, 13);
    }
    // Round 3: a = (a + H(b,c,d) + X[k] + 6ED9EBA1) <<< s
    for (const k of [0, 2, 1, 3]) {
      a = rotl((a + h(b, c, d) + x[k]! + 0x6ed9eba1) | 0, 3);
      d = rotl((d + h(a, b, c) + x[k + 8]! + 0x6ed9eba1) | 0, 9);
      c = rotl((c + h(d, a, b) + x[k + 4]! + 0x6ed9eba1) | 0, 11);
      b = rotl((b + h(c, d, a) + x[k + 12]! + 0x6ed9eba1) | 0, 15);
    }
    a = (a + aa) | 0;
    b = (b + bb) | 0;
    c = (c + cc) | 0;
    d = (d + dd) | 0;
  }
  const out = new Uint8Array(16);
  const o = new DataView(out.buffer);
  [a, b, c, d].forEach((v, i) => o.setUint32(i * 4, v >>> 0, true));
  return out;
}

/** HMAC-MD4 of `message` under `key` (a key longer than the 64-byte block is hashed first, as RFC 2104 says). */
export function hmacMd4(key: Uint8Array, message: Uint8Array): Uint8Array {
  const k = new Uint8Array(BLOCK);
  k.set(key.length > BLOCK ? md4(key) : key);
  const inner = new Uint8Array(BLOCK + message.length);
  const outer = new Uint8Array(BLOCK + 16);
  for (let i = 0; i < BLOCK; i++) {
    inner[i] = k[i]! ^ 0x36;
    outer[i] = k[i]! ^ 0x5c;
  }
  inner.set(message, BLOCK);
  outer.set(md4(inner), BLOCK);
  return md4(outer);
}
