import { defineCommand } from "citty";
import { globalArgs, invocationOf } from "../context.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent help", "the commands (as hub-agent --help)"],
      ["hub-agent help queue retry", "one command's help (as hub-agent queue retry --help)"],
    ],
  }),
  args: {
    ...globalArgs,
    command: { type: "positional", description: "a command (queue retry: two words)", required: false },
  },
  async run({ args, data }) {
    // The command table and the runner are loaded already: main.ts imports the runner, and runs this module.
    const [{ main, rootHelp }, { helpText }] = await Promise.all([import("../main.ts"), import("../runner.ts")]);
    invocationOf(data).stdout(await helpText(main, args._, rootHelp));
  },
});
