import { defineCommand } from "citty";
import { globalArgs, invocationOf } from "../context.ts";

export default defineCommand({
  meta: { name: "help", description: "the list of commands, or one command's help: help [<command>]" },
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
