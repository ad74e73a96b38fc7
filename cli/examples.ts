// Imports nothing: `--help` shows these without loading a command's module (cli/main.ts, cli/runner.ts).

/** Short examples for each command's `--help` ("" is `hub-agent --help`): the command line, then what it does. */
export const EXAMPLES: Record<string, [string, string][]> = {
  "": [
    ["hub-agent demo", "see it work: the built-in service and a simulated game, about 20 s"],
    ["hub-agent init && hub-agent doctor", "write hub-agent.toml to fill in, then check it"],
    ["hub-agent run", "the agent, until Ctrl-C"],
    ['hub-agent ban Bob 1d "griefing"', "ban an online player by nick for a day"],
  ],
  run: [
    ["hub-agent run", "until SIGINT/SIGTERM"],
    ["hub-agent run --once --quiet", "one round of every job, for cron: exit 0 all delivered, 6 something waits"],
    ["hub-agent run --once --json", "the same, then one JSON object: each job, each queue, the exit code"],
    ["hub-agent run --config /etc/hub-agent/hub-agent.toml", "another configuration file"],
  ],
  status: [
    ["hub-agent status", "is a run alive, and what is it doing"],
    ["hub-agent status --json", "the same for a script"],
  ],
  demo: [
    ["hub-agent demo", "one script, then a summary"],
    ["hub-agent demo --loop", "repeat the script until Ctrl-C"],
    ["hub-agent demo --duration 60 --json > summary.json", "a minute, then the summary as JSON"],
  ],
  dashboard: [["hub-agent dashboard", "the web page of who is online"]],
  help: [
    ["hub-agent help", "the commands (as hub-agent --help)"],
    ["hub-agent help queue retry", "one command's help (as hub-agent queue retry --help)"],
  ],
  version: [
    ["hub-agent version", "the version, commit, build date, target and Bun's version"],
    ["hub-agent version --json", "the same as one JSON object"],
  ],
  doctor: [
    ["hub-agent doctor", "check ./hub-agent.toml, the storage, the service, the key and the clock"],
    ["hub-agent doctor --config /etc/hub-agent/hub-agent.toml", "another configuration file"],
  ],
  ban: [
    ['hub-agent ban Bob 30m "spawn killing"', "an online player by nick, for 30 minutes"],
    ["hub-agent ban 76561198087654322 perm cheating", "by SteamID64, permanently (an offline player too)"],
    ["hub-agent ban Bob 1d griefing --as Carol", "as Carol: VyHub checks her permission"],
  ],
  unban: [
    ["hub-agent unban Bob", "lift Bob's bans"],
    ["hub-agent unban STEAM_0:0:63694297", "by any spelling of the platform id"],
  ],
  warn: [['hub-agent warn Bob "mic spam"', "VyHub may ban at its warning threshold"]],
  warns: [["hub-agent warns Bob", "Bob's warnings in this serverbundle"]],
  init: [
    ["hub-agent init", "write ./hub-agent.toml (mode 0600)"],
    ["hub-agent init --force --config /etc/hub-agent/hub-agent.toml", "overwrite that file"],
  ],
  queue: [
    ["hub-agent queue status", "what waits to be sent, and why"],
    ["hub-agent queue retry 001795635580601", "send one entry now (a unique part of its id will do)"],
  ],
  "queue status": [
    ["hub-agent queue status", "every queue, its size and its oldest entries"],
    ["hub-agent queue status --all --json", "every entry, for a script"],
  ],
  "queue retry": [["hub-agent queue retry 001795635580601", "send it now: exit 0 delivered, 6 still queued"]],
  "queue drop": [["hub-agent queue drop 001795635580601", "remove it unsent"]],
  sandbox: [
    ["hub-agent sandbox", "any free port, a random key"],
    ["hub-agent sandbox --port 8787 --key try-it-out", "the README's Getting started"],
    ["hub-agent sandbox reward Alice 'say Thanks, %nick%'", "from another terminal: give Alice a reward"],
  ],
  "sandbox reward": [
    ["hub-agent sandbox reward Alice 'say Thanks, %nick%'", "run by the next rewards round while Alice is online"],
    ["hub-agent sandbox reward Bob 'say Hi' --event connect", "run when Bob next connects"],
  ],
  completion: [
    ["source <(hub-agent completion bash)", "in ~/.bashrc"],
    ["hub-agent completion fish > ~/.config/fish/completions/hub-agent.fish", "fish"],
  ],
};

/** The EXAMPLES section of a help page; empty when the command has none. */
export function examplesHelp(path: string[]): string[] {
  const list = EXAMPLES[path.join(" ")];
  if (!list?.length) return [];
  const width = Math.min(56, Math.max(...list.map(([cmd]) => cmd.length)));
  return ["EXAMPLES", ...list.map(([cmd, what]) => `  ${cmd.padEnd(width)}  ${what}`.trimEnd())];
}
