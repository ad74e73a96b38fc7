/**
 * The in-memory service a file's process tests share, and the compiled binary they run: both ready before the
 * file's first test, the service stopped after its last.
 */
import { afterAll, beforeAll } from "bun:test";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { binary } from "../cli/binary.ts";

export function useSandbox(set: (sb: Sandbox) => void): void {
  let sb: Sandbox | undefined;
  beforeAll(async () => {
    sb = await startSandbox();
    set(sb);
    await binary();
  }, 120_000);
  afterAll(() => sb?.stop());
}
