/** The part of npm's `rcon` (node-rcon, no types of its own) the cross-check tests use. */
declare module "rcon" {
  import { EventEmitter } from "node:events";
  export default class Rcon extends EventEmitter {
    constructor(host: string, port: number, password: string, options?: { tcp?: boolean; challenge?: boolean });
    connect(): void;
    send(data: string): void;
    disconnect(): void;
  }
}
