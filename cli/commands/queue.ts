import { defineCommand } from "citty";
import { globalArgs, createContext, type Context } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import {
  type QueueStatus,
  type ReportRetry,
  type Unfound,
  MIN_ID_PART,
  QUARANTINE_FIX,
  dropEntry,
  queueStatus,
  retryEntry,
} from "../../lib/app/queue.ts";
import { helpMeta } from "../args.ts";

const ID_ARG = {
  type: "positional",
  description: "the entry's id as `queue status` shows it (or a unique part of it, 8 characters or more)",
  required: true,
} as const;

/** Entries `queue status` shows per queue without --all: a backlog of thousands costs what these do. */
const SHOWN = 20;

const status = defineCommand({
  meta: helpMeta({
    name: "status",
    description: `every durable queue: entries, age, attempts, last error (the oldest ${SHOWN} entries of each and the newest ${SHOWN} quarantined files; --all: every one)`,
    examples: [
      ["hub-agent queue status", "every queue, its size and its oldest entries"],
      ["hub-agent queue status --all --json", "every entry, for a script"],
    ],
  }),
  args: {
    ...globalArgs,
    all: { type: "boolean", description: "list every entry and quarantined file, not only the oldest and newest" },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const deps = { config: await ctx.config({ readOnly: true }), logger: ctx.logger };
    const r = await queueStatus(deps, { ...(args.all ? {} : { limit: SHOWN }), describe: !ctx.json });
    ctx.emit({ queues: r.queues, quarantine: r.quarantine });
    if (!ctx.json) for (const line of statusLines(r)) ctx.say(line);
  },
});

function statusLines({ queues, quarantine, what }: QueueStatus): string[] {
  const lines: string[] = [];
  for (const q of queues) {
    const oldest = q.oldest_age_s === null ? "" : `, oldest ${q.oldest_age_s} s`;
    lines.push(`${q.queue.padEnd(16)} ${q.entries} entr${q.entries === 1 ? "y" : "ies"}${oldest}`);
    for (const i of q.items) {
      const error = i.last_error ? `, last error: ${i.last_error}` : "";
      lines.push(`  ${i.id}  ${i.age_s} s old, ${i.attempts} attempt(s)${error}`);
      if (i.uncertain)
        lines.push(
          `    uncertain: a request may have reached the service; looked up there before it is sent again` +
            (i.last_lookup ? ` (last lookup ${i.last_lookup.at}: ${i.last_lookup.result})` : " (not looked up yet)"),
        );
      if (what[i.id]) lines.push(`    ${what[i.id]}`);
    }
    if (q.more) lines.push(`  … and ${q.more} more (\`hub-agent queue status --all\` lists every entry)`);
  }
  const { count, dir } = quarantine;
  if (!count) return [...lines, `${"quarantine".padEnd(16)} none (${dir})`];
  lines.push(`${"quarantine".padEnd(16)} ${count} unreadable record(s) in ${dir}: ${QUARANTINE_FIX}`);
  for (const f of quarantine.files) lines.push(`  ${f.key}  moved ${f.at}: ${f.file}`);
  const more = count - quarantine.files.length;
  if (more) lines.push(`  … and ${more} more (\`hub-agent queue status --all\` lists every file)`);
  return lines;
}

const retry = defineCommand({
  meta: helpMeta({
    name: "retry",
    description:
      "send one queued entry now (with its player's other queued entries, in order; an uncertain one is looked up at the service first); exit 0 delivered, 6 still queued",
    examples: [["hub-agent queue retry 001795635580601", "send it now: exit 0 delivered, 6 still queued"]],
  }),
  args: { ...globalArgs, id: ID_ARG },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const { sessionOf, settle, jsonStatus } = await import("../sanction.ts");
    const r = await retryEntry(sessionOf(ctx), args.id, (wait, id) =>
      ctx.logger.info(`${id} is uncertain: looking it up at the service in ${Math.ceil(wait / 1000)} s`),
    );
    switch (r.kind) {
      case "unfound":
        throw unfound(args.id, r);
      case "reward_failed":
        throw new CliError(
          `${r.id} is a reward the game refused: nothing to send; \`hub-agent run\` tries it again by itself, and \`hub-agent queue drop ${r.id}\` clears its refusals so its next trigger tries it at once`,
          EXIT.USAGE,
        );
      case "report":
        return reportRetried(ctx, r.id, r.report);
    }
    const { status } = settle(ctx, r);
    const error = r.error ? { error: r.error } : {};
    ctx.emit({ action: "retry", queue: r.queue, entry_id: r.id, status: jsonStatus(status), ...error });
    ctx.say(r.message);
  },
});

/** A reward report sent again: its line and exit code. */
function reportRetried(ctx: Context, entryId: string, r: ReportRetry) {
  const id = r.reward?.id;
  const queue = "reward_executed";
  switch (r.kind) {
    case "unreadable":
      throw new CliError(`${entryId} is not a reward report this version can read`, EXIT.FAILURE);
    case "reported":
      throw new CliError(
        `${entryId}: reward ${id} is already reported; it is kept until you drop it (\`hub-agent queue drop ${entryId}\`)`,
        EXIT.USAGE,
      );
    case "not_issued":
      throw new CliError(
        `${entryId}: the command of reward ${id} is not known to have been issued; \`hub-agent run\` reports it`,
        EXIT.FAILURE,
      );
    case "retry":
      ctx.emit({ action: "retry", queue, entry_id: entryId, status: "queued", error: r.error });
      ctx.say(`${entryId} is still queued: ${r.error}`);
      ctx.exit(EXIT.QUEUED);
      return;
    case "refused":
      // Kept: the service still lists the reward as open, and without the entry `run` would execute it again.
      throw new CliError(
        `VyHub refused to mark reward ${id} as executed (${r.error}); kept as refused so it does not run again`,
        EXIT.FAILURE,
      );
    case "sent":
      ctx.emit({ action: "retry", queue, entry_id: entryId, status: "delivered" });
      ctx.say(`reward ${id} (${r.reward.reward} for ${r.reward.player}) reported as executed`);
  }
}

const drop = defineCommand({
  meta: helpMeta({
    name: "drop",
    description: "remove one queued entry without sending it",
    examples: [["hub-agent queue drop 001795635580601", "remove it unsent"]],
  }),
  args: {
    ...globalArgs,
    id: ID_ARG,
    force: { type: "boolean", description: "also drop a reward report (the reward would then run again)" },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const r = await dropEntry({ config: await ctx.config(), logger: ctx.logger }, args.id, { force: !!args.force });
    switch (r.kind) {
      case "unfound":
        throw unfound(args.id, r);
      case "needs_force":
        throw new CliError(
          `${r.id} reports an executed reward (${r.what}); without the report VyHub keeps the reward open and it ` +
            "would run again. Add --force to drop it anyway",
          EXIT.USAGE,
        );
      case "busy":
        throw new CliError(`another hub-agent process holds ${args.id} right now; try again in a moment`, EXIT.FAILURE);
      case "gone":
        throw new CliError(`${r.id} was sent or dropped by another process meanwhile`, EXIT.NOT_FOUND);
    }
    const { queue, entry, what, uncertain } = r;
    ctx.emit({ action: "drop", queue, entry_id: entry.id, data: entry.data, ...(uncertain ? { uncertain } : {}) });
    ctx.say(
      `dropped ${entry.id} from the ${queue} queue${what ? `: ${what}` : ""}` +
        (uncertain ? `; its answer was lost, so VyHub may have carried it out already: check there` : ""),
    );
    // Queued, the unban cancelled the player's queued bans for good: dropping it does not bring them back.
    if (queue === "unban")
      ctx.say(
        "the queued bans it cancelled when it was queued stay cancelled: `hub-agent ban` again any that was meant",
      );
  },
});

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent queue status", "what waits to be sent, and why"],
      ["hub-agent queue retry 001795635580601", "send one entry now (a unique part of its id will do)"],
    ],
  }),
  args: { ...globalArgs },
  subCommands: { status, retry, drop },
});

function unfound(id: string, f: Unfound): CliError {
  if (f.reason === "ambiguous")
    return new CliError(
      `"${id}" is part of ${f.matches.length} entries' ids: ${f.matches.map((m) => `${m.id} (${m.queue})`).join(", ")}; give more of it`,
      EXIT.USAGE,
    );
  // A part this short is never looked for: "no entry has it" would send the operator looking for a typo.
  if (id.trim().length < MIN_ID_PART)
    return new CliError(
      `"${id}" is too short to find an entry by: give ${MIN_ID_PART} characters or more of its id (\`hub-agent queue status\` lists them)`,
      EXIT.USAGE,
    );
  return new CliError(`no queued entry has the id "${id}": \`hub-agent queue status\` lists them`, EXIT.NOT_FOUND);
}
