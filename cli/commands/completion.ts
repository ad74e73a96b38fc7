import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { SHELLS, type Shell } from "../completion.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["source <(hub-agent completion bash)", "in ~/.bashrc"],
      ["hub-agent completion fish > ~/.config/fish/completions/hub-agent.fish", "fish"],
    ],
  }),
  args: {
    ...globalArgs,
    shell: { type: "positional", description: "bash, zsh or fish", valueHint: SHELLS.join("|"), required: true },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const shell = args.shell as Shell;
    if (!SHELLS.includes(shell))
      throw new CliError(`unknown shell "${args.shell}": use ${SHELLS.join(", ")}`, EXIT.USAGE);
    // The command table itself (cli/main.ts), loaded lazily like every command; main.ts is already loaded.
    const [{ main }, { commandTree, completionScript }] = await Promise.all([
      import("../main.ts"),
      import("../completion.ts"),
    ]);
    const script = completionScript(shell, await commandTree(main));
    if (ctx.json) ctx.emit({ shell, script });
    else ctx.invocation.stdout(script.replace(/\n$/, "")); // a line writer: it adds the script's last break back
  },
});
