import { afterEach } from "bun:test";
import { EXAMPLES_NOW, startSandbox, type Sandbox, type SandboxOptions } from "../../lib/sandbox/index.ts";

export { EXAMPLES_NOW, SEED_IDS } from "../../lib/sandbox/index.ts";

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface TestSandbox extends Sandbox {
  /** The sandbox clock; tests move it by assigning `clock.now`. */
  clock: { now: number };
  call(
    method: string,
    path: string,
    opts?: { query?: Record<string, string | string[]>; body?: unknown; auth?: string | null },
  ): Promise<Reply>;
}

const running: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((sb) => sb.stop()));
});

/** A sandbox on a free loopback port with a clock that starts at the examples' "now". */
export async function start(opts: SandboxOptions = {}): Promise<TestSandbox> {
  const clock = { now: EXAMPLES_NOW };
  const sb = await startSandbox({ now: () => clock.now, ...opts });
  running.push(sb);
  return Object.assign(sb, {
    clock,
    async call(
      method: string,
      path: string,
      o: { query?: Record<string, string | string[]>; body?: unknown; auth?: string | null } = {},
    ) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(o.query ?? {})) for (const item of [v].flat()) params.append(k, item);
      const headers: Record<string, string> = {};
      const auth = o.auth === undefined ? `Bearer ${sb.key}` : o.auth;
      if (auth !== null) headers.authorization = auth;
      if (o.body !== undefined) headers["content-type"] = "application/json; charset=utf-8";
      const res = await fetch(`${sb.url}${path}${params.size ? `?${params}` : ""}`, {
        method,
        headers,
        body: o.body === undefined ? undefined : typeof o.body === "string" ? o.body : JSON.stringify(o.body),
        redirect: "manual",
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, headers: res.headers, text, body };
    },
  });
}

export const DAY = 86_400_000;
