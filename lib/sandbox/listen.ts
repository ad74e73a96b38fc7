// The only Bun-specific file: serve a web-standard handler on a port, and stop / re-listen on that same port.
export interface Listener {
  port: number;
  stop(): Promise<void>;
}

export function listen(hostname: string, port: number, fetch: (req: Request) => Promise<Response>): Listener {
  const server = Bun.serve({ hostname, port, fetch });
  return {
    port: server.port ?? port,
    // Closing active connections too, so a stopped sandbox looks like a crashed service.
    stop: () => server.stop(true),
  };
}
