import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";

const status = defineCommand({
  meta: { name: "status", description: "every durable queue: entries, age, attempts, last error" },
  args: { ...globalArgs },
  async run({ args }) {
    const ctx = createContext(args);
    const config = await ctx.config();
    const [{ openStore }, { queueStatus }] = await Promise.all([
      import("../../lib/store/index.ts"),
      import("../../lib/queues.ts"),
    ]);
    const store = await openStore({ dir: config.storage.dir, logger: ctx.logger });
    const queues = await queueStatus(store, Date.now());
    ctx.emit({ queues });
    for (const q of queues) {
      ctx.say(
        `${q.queue.padEnd(16)} ${q.entries} entr${q.entries === 1 ? "y" : "ies"}${q.oldest_age_s === null ? "" : `, oldest ${q.oldest_age_s} s`}`,
      );
      for (const i of q.items)
        ctx.say(
          `  ${i.id}  ${i.age_s} s old, ${i.attempts} attempt(s)${i.last_error ? `, last error: ${i.last_error}` : ""}`,
        );
    }
  },
});

export default defineCommand({
  meta: { name: "queue", description: "inspect the durable queues" },
  args: { ...globalArgs },
  subCommands: { status },
});
