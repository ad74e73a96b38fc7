import { defineCommand } from "citty";
import { globalArgs, createContext, type Context } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import type { FoundEntry, QueueItem, QueueName } from "../../lib/queues.ts";
import type { Store } from "../../lib/store/index.ts";

const ID_ARG = {
  type: "positional",
  description: "the entry's id as `queue status` shows it (or a unique part of it, 8 characters or more)",
  required: true,
} as const;

/** Entries `queue status` shows per queue without --all: a backlog of thousands costs what these do. */
const SHOWN = 20;

const status = defineCommand({
  meta: {
    name: "status",
    description: `every durable queue: entries, age, attempts, last error (the oldest ${SHOWN} entries of each; --all: every one)`,
  },
  args: { ...globalArgs, all: { type: "boolean", description: "list every entry, not only the oldest of each queue" } },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const store = await openStoreOf(ctx);
    const [{ queueStatus }, { join }, { QUARANTINE_FIX }] = await Promise.all([
      import("../../lib/queues.ts"),
      import("node:path"),
      import("../../lib/store/records.ts"),
    ]);
    const queues = await queueStatus(store, Date.now(), args.all ? {} : { limit: SHOWN });
    const corrupt = await store.corrupt(); // after the queues were read: what reading them moved aside counts too
    // Records moved aside as unreadable: not acted on, so counted here every time, not only when it happened.
    const quarantine = {
      dir: join(store.dir, "corrupt"),
      count: corrupt.length,
      files: corrupt.map((c) => ({ key: c.key, file: c.file, at: new Date(c.at).toISOString() })),
    };
    ctx.emit({ queues, quarantine });
    if (ctx.json) return;
    await printQueues(ctx, queues);
    if (!quarantine.count) return ctx.say(`${"quarantine".padEnd(16)} none (${quarantine.dir})`);
    ctx.say(
      `${"quarantine".padEnd(16)} ${quarantine.count} unreadable record(s) in ${quarantine.dir}: ${QUARANTINE_FIX}`,
    );
    for (const f of quarantine.files) ctx.say(`  ${f.key}  moved ${f.at}: ${f.file}`);
  },
});

async function printQueues(
  ctx: Context,
  queues: Awaited<ReturnType<typeof import("../../lib/queues.ts").queueStatus>>,
) {
  for (const q of queues) {
    ctx.say(
      `${q.queue.padEnd(16)} ${q.entries} entr${q.entries === 1 ? "y" : "ies"}${q.oldest_age_s === null ? "" : `, oldest ${q.oldest_age_s} s`}`,
    );
    for (const i of q.items) {
      const what = await describe(q.queue, i.data, i.attempts, i.id);
      ctx.say(
        `  ${i.id}  ${i.age_s} s old, ${i.attempts} attempt(s)${i.last_error ? `, last error: ${i.last_error}` : ""}`,
      );
      if (i.uncertain)
        ctx.say(
          `    uncertain: a request may have reached the service; looked up there before it is sent again` +
            (i.last_lookup ? ` (last lookup ${i.last_lookup.at}: ${i.last_lookup.result})` : " (not looked up yet)"),
        );
      if (what) ctx.say(`    ${what}`);
    }
    if (q.more) ctx.say(`  … and ${q.more} more (\`hub-agent queue status --all\` lists every entry)`);
  }
}

const retry = defineCommand({
  meta: {
    name: "retry",
    description:
      "send one queued entry now (with the rest of its round; an uncertain one is looked up at the service first); exit 0 delivered, 6 still queued",
  },
  args: { ...globalArgs, id: ID_ARG },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const { openSession, deliver, RESULT_EXIT, STATUS_JSON } = await import("../sanction.ts");
    const s = await openSession(ctx);
    const { queue, entry } = found(await find(s.store, args.id), args.id);
    if (queue === "reward_executed") return retryReward(ctx, s, entry);
    if (queue === "reward_failed")
      throw new CliError(
        `${entry.id} is a reward the game refused: nothing to send; \`hub-agent run\` tries it again by itself, and \`hub-agent queue drop ${entry.id}\` clears its refusals so its next trigger tries it at once`,
        EXIT.USAGE,
      );
    const { isUncertain, lookupDueAt, outcomeMessage } = await import("../../lib/sanctions/index.ts");
    if (isUncertain(entry) && entry.lastAttemptAt !== undefined) {
      // The service may still be working on the lost request: looking it up sooner could miss it and send it twice.
      const wait = lookupDueAt(entry.lastAttemptAt, s.settleMs, Date.now()) - Date.now();
      if (wait > 0) {
        ctx.logger.info(`${entry.id} is uncertain: looking it up at the service in ${Math.ceil(wait / 1000)} s`);
        await Bun.sleep(wait);
      }
    }
    const d = await deliver(s, queue, entry.id, { askAnyway: true });
    const text =
      (d.outcome && outcomeMessage(s.messages, d.outcome)) ??
      (d.result === "elsewhere"
        ? `${entry.id}: sent by another hub-agent process at the same moment; its log has the answer`
        : `${entry.id} is still queued${d.error ? `: ${d.error}` : ""}`);
    const code = RESULT_EXIT[d.result];
    if (code !== EXIT.OK && code !== EXIT.QUEUED) throw new CliError(text, code);
    ctx.emit({
      action: "retry",
      queue,
      entry_id: entry.id,
      status: STATUS_JSON[d.result],
      ...(d.error ? { error: d.error } : {}),
    });
    ctx.say(text);
    ctx.exit(code);
  },
});

const drop = defineCommand({
  meta: { name: "drop", description: "remove one queued entry without sending it" },
  args: {
    ...globalArgs,
    id: ID_ARG,
    force: { type: "boolean", description: "also drop a reward report (the reward would then run again)" },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const store = await openStoreOf(ctx);
    const { queue, entry } = found(await find(store, args.id), args.id);
    const what = await describe(queue, entry.data, entry.attempts, entry.id);
    // A reported entry (interrupted delivery, kept for the operator) is safe to drop: VyHub no longer lists the reward.
    const reported = queue === "reward_executed" && (entry.data as { reported?: unknown }).reported === true;
    if (queue === "reward_executed" && !reported && !args.force)
      throw new CliError(
        `${entry.id} reports an executed reward (${what}); without the report VyHub keeps the reward open and it ` +
          "would run again. Add --force to drop it anyway",
        EXIT.USAGE,
      );
    const [{ DELIVERY_LOCK }, { LockTimeoutError }, { entryUncertain }, v] = await Promise.all([
      import("../../lib/sanctions/index.ts"),
      import("../../lib/store/index.ts"),
      import("../../lib/queues.ts"),
      import("valibot"),
    ]);
    const remove = () => store.queue(queue, v.unknown()).remove(entry.id);
    let removed: boolean;
    try {
      // Under the delivery lock: a sanction is either sent by a round or dropped here, never both.
      removed = queue.startsWith("reward_") ? await remove() : await store.withLock(DELIVERY_LOCK, remove);
    } catch (e) {
      if (!(e instanceof LockTimeoutError)) throw e;
      throw new CliError(`another hub-agent process is delivering right now; try again in a moment`, EXIT.FAILURE);
    }
    if (!removed) throw new CliError(`${entry.id} was sent or dropped by another process meanwhile`, EXIT.NOT_FOUND);
    // Dropping stops a resend, not what a lost answer may already have done: the operator must look at VyHub.
    const uncertain = entryUncertain(queue, entry);
    ctx.emit({ action: "drop", queue, entry_id: entry.id, data: entry.data, ...(uncertain ? { uncertain } : {}) });
    ctx.say(
      `dropped ${entry.id} from the ${queue} queue${what ? `: ${what}` : ""}` +
        (uncertain ? `; its answer was lost, so VyHub may have carried it out already: check there` : ""),
    );
  },
});

export default defineCommand({
  meta: { name: "queue", description: "inspect and manage the durable queues" },
  args: { ...globalArgs },
  subCommands: { status, retry, drop },
});

async function openStoreOf(ctx: Context): Promise<Store> {
  const config = await ctx.config();
  const { openStore } = await import("../../lib/store/index.ts");
  return openStore({ dir: config.storage.dir, logger: ctx.logger, sweep: false });
}

async function find(store: Store, id: string): Promise<FoundEntry> {
  const { findEntry } = await import("../../lib/queues.ts");
  return findEntry(store, id);
}

function found(f: FoundEntry, id: string): Extract<FoundEntry, { ok: true }> {
  if (f.ok) return f;
  if (f.reason === "ambiguous")
    throw new CliError(
      `"${id}" is part of ${f.matches.length} entries' ids: ${f.matches.map((m) => `${m.id} (${m.queue})`).join(", ")}; give more of it`,
      EXIT.USAGE,
    );
  throw new CliError(`no queued entry has the id "${id}": \`hub-agent queue status\` lists them`, EXIT.NOT_FOUND);
}

/** One line saying what an entry is about, for people; "" when its data is not of a known shape. */
async function describe(queue: QueueName, data: QueueItem["data"], attempts: number, entryId: string): Promise<string> {
  const [v, s, { formatLength }, { ExecutedRewardSchema, interruptedAdvice }, f] = await Promise.all([
    import("valibot"),
    import("../../lib/sanctions/index.ts"),
    import("../../lib/duration.ts"),
    import("../../lib/rewards/executed.ts"),
    import("../../lib/rewards/failures.ts"),
  ]);
  const who = (p: { name: string; identifier: string | null; user_id: string | null }) =>
    p.identifier === null
      ? `VyHub user ${p.user_id} (game id resolved at delivery)`
      : p.name
        ? `${p.name} (${p.identifier})`
        : p.identifier;
  const onAccept = (e: { enforce?: string }) =>
    e.enforce === "on_accept" ? " — takes effect once VyHub accepts it (the issuer's permission is checked there)" : "";
  const by = (c: { name: string } | null) => `by ${c ? c.name : "the console"}`;
  if (queue === "ban") {
    const r = v.safeParse(s.BanEntrySchema, data);
    if (!r.success) return "";
    const b = r.output;
    const cancelled = b.status === "UNBANNED" ? " — lifted by an unban, will not be sent" : "";
    return `ban ${who(b.target)} ${formatLength(b.length)} "${b.reason}" ${by(b.creator)}${cancelled || onAccept(b)}`;
  }
  if (queue === "unban") {
    const r = v.safeParse(s.UnbanEntrySchema, data);
    return r.success ? `unban ${who(r.output.target)} ${by(r.output.processor)}${onAccept(r.output)}` : "";
  }
  if (queue === "warning") {
    const r = v.safeParse(s.WarningEntrySchema, data);
    return r.success ? `warn ${who(r.output.target)} "${r.output.reason}" ${by(r.output.creator)}` : "";
  }
  if (queue === "reward_failed") {
    const r = v.safeParse(f.FailedRewardSchema, data);
    if (!r.success) return "";
    const e = r.output;
    const what = `reward ${e.reward} (${e.packet}) for ${e.player}, applied reward ${e.id}, refused by the game`;
    return f.gaveUp({ attempts })
      ? `${what} — given up: fix the command at VyHub (or what the game allows), then drop this entry to try again`
      : `${what} — \`run\` tries it again after a pause`;
  }
  const r = v.safeParse(ExecutedRewardSchema, data);
  if (!r.success) return "";
  const e = r.output;
  const note = e.refused
    ? " — VyHub refused the report, so it never runs again: `queue retry` reports it again once the cause is fixed, `queue drop --force` lets it run again"
    : e.interrupted
      ? ` — may not have been delivered (hub-agent stopped while issuing it)${e.reported ? ", reported to VyHub" : ""}; ${interruptedAdvice(entryId, e.reported === true)}`
      : e.issued
        ? ""
        : " — being issued, or issuing was interrupted";
  return `reward ${e.reward} (${e.packet}) ${e.interrupted ? "claimed" : "executed"} for ${e.player}, applied reward ${e.id}${note}`;
}

/** A reward report: PATCH executed_on now (the same rules as `run`'s rounds; lib/rewards/executed.ts). */
async function retryReward(
  ctx: Context,
  s: Awaited<ReturnType<typeof import("../sanction.ts").openSession>>,
  entry: Extract<FoundEntry, { ok: true }>["entry"],
) {
  const { ExecutedRewardSchema, EXECUTED_QUEUE, retryReport } = await import("../../lib/rewards/executed.ts");
  const queue = s.store.queue(EXECUTED_QUEUE, ExecutedRewardSchema);
  const r = await retryReport(s.api, queue, s.config.api.server_id, entry, Date.now());
  const id = r.reward?.id;
  switch (r.kind) {
    case "unreadable":
      throw new CliError(`${entry.id} is not a reward report this version can read`, EXIT.FAILURE);
    case "reported":
      throw new CliError(
        `${entry.id}: reward ${id} is already reported; it is kept until you drop it (\`hub-agent queue drop ${entry.id}\`)`,
        EXIT.USAGE,
      );
    case "not_issued":
      throw new CliError(
        `${entry.id}: the command of reward ${id} is not known to have been issued; \`hub-agent run\` reports it`,
        EXIT.FAILURE,
      );
    case "retry":
      ctx.emit({ action: "retry", queue: EXECUTED_QUEUE, entry_id: entry.id, status: "queued", error: r.error });
      ctx.say(`${entry.id} is still queued: ${r.error}`);
      ctx.exit(EXIT.QUEUED);
      return;
    case "refused":
      // Kept: the service still lists the reward as open, and without the entry `run` would execute it again.
      throw new CliError(
        `VyHub refused to mark reward ${id} as executed (${r.error}); kept as refused so it does not run again`,
        EXIT.FAILURE,
      );
    case "sent":
      ctx.emit({ action: "retry", queue: EXECUTED_QUEUE, entry_id: entry.id, status: "delivered" });
      ctx.say(`reward ${id} (${r.reward.reward} for ${r.reward.player}) reported as executed`);
  }
}
