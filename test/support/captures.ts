/**
 * Output captured from real game servers and clients (test/fixtures/<game>/): each file opens with `#` lines saying
 * which server, version and client made it, ends its header with `# ---`, and then holds the text byte for byte.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const FIXTURES = join(import.meta.dir, "..", "fixtures");

/** A capture (`openarena/status-players.txt`): its header and the text. */
export function capture(file: string): { header: string; text: string } {
  const raw = readFileSync(join(FIXTURES, file), "utf8");
  const end = raw.indexOf("# ---\n");
  if (end < 0) throw new Error(`${file}: no '# ---' line after the header`);
  return { header: raw.slice(0, end), text: raw.slice(end + "# ---\n".length) };
}
