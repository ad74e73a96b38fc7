/**
 * What the real OpenArena server prints for `status`, for the fakes and the parser tests: ioq3 1.36's SV_Status_f
 * rebuilt, checked byte for byte against the captures in test/fixtures/openarena/.
 */

export interface Ioq3Client {
  slot: number;
  name: string;
  /** `bot`, `loopback`, or a human's IP without its port (ioq3 1.36's NET_AdrToString). */
  address: string;
  score?: number;
  /** A number, `CON` (connecting) or `ZMB` (just left). */
  ping?: number | "CON" | "ZMB";
  rate?: number;
}

/** Visible characters: ioq3's SV_Strlen skips colour codes (a caret and a letter or digit). */
const visible = (name: string) => name.replace(/\^[0-9A-Za-z]/g, "").length;
const pad = (width: number) => " ".repeat(Math.max(width, 1));

/** The reply to `status` on ioq3 1.36 (Debian's openarena-server 0.8.8). */
export function ioq3Status(map: string, clients: Ioq3Client[]): string {
  const rows = clients.map((c) => {
    const ping = typeof c.ping === "string" ? `${c.ping} ` : `${String(c.ping ?? 0).padStart(4)} `;
    const name = `${c.name}${pad(16 - visible(c.name))}`;
    const address = `^7${c.address}${pad(39 - c.address.length)}`;
    return `${String(c.slot).padStart(2)} ${String(c.score ?? 0).padStart(5)} ${ping}${name}${address} ${String(c.rate ?? 99999).padStart(5)}\n`;
  });
  return (
    `map: ${map}\n` +
    "cl score ping name            address                                 rate \n" +
    "-- ----- ---- --------------- --------------------------------------- -----\n" +
    rows.join("") +
    "\n"
  );
}
