/**
 * A command's context (cli/context.ts): the secrets every line is cleaned of.
 */
import { expect, test } from "bun:test";
import { createContext, newInvocation } from "../../cli/context.ts";

test("a secret registered again (each SIGHUP's and each restart's reading of a host's servers) is kept once", () => {
  let err = "";
  const invocation = newInvocation({
    env: {},
    cwd: "/",
    stdout: () => {},
    stderr: (text) => void (err += `${text}\n`),
    stderrIsTty: () => false,
  });
  const ctx = createContext({ _: [] } as never, invocation);
  // A host of 100 servers read again 100 times: what every log line is cleaned of must not grow with the readings.
  for (let round = 0; round < 100; round++) for (let s = 0; s < 100; s++) ctx.secret(`key-of-server-${s}`);
  expect(invocation.secrets).toHaveLength(100);
  ctx.logger.info("using key-of-server-7 and key-of-server-42");
  expect(err).toContain("using [redacted] and [redacted]");
});
