/**
 * A one-shot command's session: its configuration, service client (one attempt a request, watched for a refused key:
 * service.ts), store, messages and the game's user type, each built on first use and once. The operations
 * (sanction.ts) take what they need of it and return outcomes: a session never prints and never exits.
 */
import type { Api } from "../api/client.ts";
import type { Logger } from "../log.ts";
import type { Messages } from "../messages.ts";
import type { Store } from "../store/index.ts";
import type { Config, GameFacts } from "./config.ts";
import type { Watched } from "./service.ts";

export interface SessionOptions {
  /** Loads the checked configuration: asked for at the first part that needs it, so bad input is refused first. */
  config: () => Promise<Config>;
  logger: Logger;
  /** Where the service client's guard goes: the caller's list of clients whose refused key decides its outcome. */
  watched: Watched[];
  /** Marks a moment of the start-up (the command's phases, npm run bench:startup). */
  mark?: (name: string) => void;
  /** What the configuration's check found of the game's ids (LoadResult.game), once config() has resolved. */
  gameFacts?: () => GameFacts | undefined;
  /** The command's entry is queued (written, it will be sent whatever the command does next). */
  queued?: (kind: "ban" | "unban" | "warning", entryId: string) => void;
  /** False: the command says no sentence for what it issued (--json: its JSON has the facts). Default true. */
  sentences?: boolean;
}

export interface Session {
  readonly logger: Logger;
  /** Whether the command says a sentence for what it issued (SessionOptions.sentences). */
  readonly sentences: boolean;
  mark(name: string): void;
  /** Says the command's entry is queued (SessionOptions.queued). */
  queued(kind: "ban" | "unban" | "warning", entryId: string): void;
  config(): Promise<Config>;
  api(): Promise<Api>;
  store(): Promise<Store>;
  messages(): Promise<Messages>;
  /** The service's user type of this game's ids (STEAM, MINECRAFT, …), from the configured bridge. */
  userType(): Promise<string>;
  /** Where the game knows its players by name, the game's id of a name (lib/game/user-type.ts). */
  nameId(): Promise<((name: string) => string | undefined) | undefined>;
  /** How long an uncertain entry waits before it is looked up (settleTime of api.timeout). */
  settleMs(): Promise<number>;
  /** The refused key or unknown server id this session's requests met, as one line; undefined when none. */
  refusal(): Promise<string | undefined>;
}

/** Memoised: the first call builds, every later one gets the same promise. */
const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
};

export function openSession(o: SessionOptions): Session {
  const config = once(o.config);
  const { logger, watched } = o;
  return {
    logger,
    sentences: o.sentences ?? true,
    mark: (name) => o.mark?.(name),
    queued: (kind, entryId) => o.queued?.(kind, entryId),
    config,
    // One attempt: an unanswered request is the queue's to retry, not a reason to keep the operator waiting.
    api: once(async () =>
      lazyApi(async () => {
        const { serviceApi } = await import("./service.ts");
        return (await serviceApi(await config(), { retries: 0, logger: logger.withTag("api"), watched })).api;
      }),
    ),
    store: once(async () => {
      const { openStore } = await import("../store/index.ts");
      return openStore({ dir: (await config()).storage.dir, logger, sweep: false });
    }),
    // A command that says no sentence (--json) loads them for a failure's line only: one its language file can't give
    // is said in English, with a warning, rather than replaced by the file's problem (the ban is queued by then).
    messages: once(async () => {
      const { MessagesError, loadMessages } = await import("../messages.ts");
      const lang = (await config()).lang;
      if (o.sentences !== false) return loadMessages(lang, { logger });
      return loadMessages(lang, { logger }).catch((e: unknown) => {
        if (!(e instanceof MessagesError)) throw e;
        logger.warn(`${e.message}; this command's lines are in English`);
        return loadMessages("en", { logger });
      });
    }),
    // From the checked configuration when it says (no preset loaded), else from the preset.
    userType: once(async () => {
      const c = await config();
      return o.gameFacts?.()?.userType ?? (await import("../game/user-type.ts")).userTypeOf(c);
    }),
    nameId: once(async () => {
      const c = await config();
      return o.gameFacts?.()?.byName === false ? undefined : (await import("../game/user-type.ts")).nameIdOf(c);
    }),
    settleMs: once(async () =>
      (await import("../sanctions/deliver.ts")).settleTime((await config()).api.timeout * 1000),
    ),
    // No client watched (a command that asked the service nothing): no refusal, and nothing to load to tell.
    refusal: async () => (watched.length ? (await import("./service.ts")).credentialRefusal(watched) : undefined),
  };
}

/**
 * The service client, built at its first request: a command that asks the service nothing (a `ban` held because the
 * service was unreachable moments ago, a `ban` handed to a `run`) never loads the HTTP client and the response
 * schemas (bench:startup). Until then it has met no limit and no outage.
 */
function lazyApi(make: () => Promise<Api>): Api {
  let real: Api | undefined;
  let making: Promise<Api> | undefined;
  const built = () => (making ??= make().then((api) => (real = api)));
  return new Proxy({} as Api, {
    get(_, name: string | symbol) {
      if (name === "rateLimitedMs") return real?.rateLimitedMs ?? 0;
      if (name === "unreachable") return real?.unreachable;
      if (typeof name !== "string" || name === "then") return undefined; // not a promise when awaited
      return async (...args: unknown[]) => {
        const api = (await built()) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return api[name]!(...args);
      };
    },
  });
}
