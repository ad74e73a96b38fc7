/** `http.listen`: an address and port, `127.0.0.1:9187` or `[::1]:9187` (docs/monitoring.md). */
export interface ListenAddress {
  hostname: string;
  /** 0: any free port (the log and `hub-agent status` say which). */
  port: number;
}

export function parseListen(text: string): ListenAddress | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { hostname: (m[1] ?? m[2]) as string, port };
}
