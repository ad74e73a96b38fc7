// Every command's --help ends with examples (each command's meta: cli/args.ts helpMeta), and every example names a real
// command with options it takes.
import { describe, expect, test } from "bun:test";
import { commandTree, type CommandNode } from "../../cli/completion.ts";
import { main } from "../../cli/main.ts";
import { hub } from "./binary.ts";

const all = (n: CommandNode): CommandNode[] => [n, ...n.subcommands.flatMap(all)];

/** The words of the example's first hub-agent invocation (quotes removed; stops at a shell operator). */
function words(example: string): string[] {
  const out: string[] = [];
  for (const m of example.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    const bare = m[3];
    if (bare && ["&&", ">", "|", ";"].includes(bare)) break;
    out.push(m[1] ?? m[2] ?? (bare as string));
  }
  const start = out.findIndex((w) => w.endsWith("hub-agent"));
  return out.slice(start + 1);
}

describe("help examples", () => {
  test("each command and subcommand has examples, and each example is a valid command line", async () => {
    const tree = await commandTree(main);
    const nodes = new Map(all(tree).map((n) => [n.path.join(" "), n]));
    for (const [key, node] of nodes) {
      const list = node.examples;
      expect(list.length).toBeGreaterThan(0);
      for (const [example] of list) {
        const w = words(example);
        // The example's command: the node itself, or (for the root and a parent) one of its subcommands.
        let n = tree;
        for (let sub; (sub = n.subcommands.find((s) => s.path.at(-1) === w[0])); w.shift()) n = sub;
        expect(n.path.join(" ").startsWith(key)).toBe(true);
        for (const flag of w.filter((x) => x.startsWith("--") && x !== "--"))
          expect(n.flags.map((f) => `--${f.name}`)).toContain(flag.split("=")[0]!);
      }
      if (key === "") continue;
      const help = await hub([...node.path, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("\nEXAMPLES\n");
      for (const [example] of list) expect(help.stdout).toContain(`  ${example}`);
    }
    const root = await hub(["--help"]);
    expect(root.stdout).toContain("\nEXAMPLES\n  hub-agent demo ");
  });

  test("each command is described once: its line in --help heads its own --help and names it in completion", async () => {
    const tree = await commandTree(main);
    const root = (await hub(["--help"])).stdout;
    const fish = (await hub(["completion", "fish"])).stdout;
    for (const node of tree.subcommands) {
      const name = node.path[0] as string;
      expect(root).toMatch(new RegExp(`^  ${name} +${RegExp.escape(node.description)}$`, "m"));
      expect((await hub([name, "--help"])).stdout.startsWith(`${node.description} (${name})`)).toBe(true);
      expect(fish).toContain(`-a ${name} -d '${node.description.replace(/'/g, "\\'")}'`);
    }
  });
});
