/**
 * The Debian package of a built executable (docs/packaging.md, "The Debian package"):
 *
 *   bun packaging/deb.ts --binary dist/hub-agent --arch amd64 --version 0.1.0 --out dist
 *
 * writes dist/hub-agent_0.1.0-1_amd64.deb with `dpkg-deb --root-owner-group --build` (no debhelper): the executable
 * in /usr/bin, the unit of deploy/hub-agent.service and its template deploy/hub-agent@.service (one process per
 * server) pointed at it, /etc/hub-agent/hub-agent.toml (a conffile: the
 * configuration `hub-agent init` writes, its store the service's), the maintainer scripts of deploy/debian/, the
 * copyright, changelogs and manual page lintian asks for, and Depends read from the executable's ELF needs.
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { renderTemplate } from "../lib/app/config.ts";
import { EM_AARCH64, EM_X86_64, readElfNeeds, type ElfNeeds } from "./elf.ts";

const ROOT = join(import.meta.dir, "..");
const DEBIAN = join(ROOT, "deploy", "debian");
const NAME = "hub-agent";
const MAINTAINER = "hub-agent maintainers <maintainers@hub-agent.invalid>";
export const STORE = "/var/lib/hub-agent";
export const CONFFILE = "/etc/hub-agent/hub-agent.toml";
export const UNIT = "/usr/lib/systemd/system/hub-agent.service";
/** The template unit beside it: hub-agent@<name>.service runs the one server <name>. */
export const TEMPLATE = "/usr/lib/systemd/system/hub-agent@.service";

export const ARCHES = { amd64: EM_X86_64, arm64: EM_AARCH64 } as const;
export type Arch = keyof typeof ARCHES;
export type Compression = "xz" | "gzip" | "none";

export interface DebOptions {
  binary: string;
  arch: Arch;
  /** The upstream version (package.json's); the package's is `<version>-1`. */
  version: string;
  out: string;
  /**
   * gzip (the default): 54 MB in about 20 s on the 2-core machine; xz (Debian's archive's) saves 13 MB and takes
   * 140–200 s; none: 115 MB at once. Every dpkg reads all three.
   */
  compression?: Compression;
}

/** `0.2.0-rc.1` → `0.2.0~rc.1-1`: a pre-release sorts before its release, and the Debian revision is 1. */
export function debianVersion(version: string): string {
  if (!/^[0-9][A-Za-z0-9.+~-]*$/.test(version)) throw new Error(`"${version}" is not a version (e.g. 0.1.0)`);
  return `${version.replaceAll("-", "~")}-1`;
}

/** glibc's libraries, all in libc6; the dynamic loader is named after the machine. */
const GLIBC =
  /^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-(x86-64|aarch64)\.so\.[12])$/;
const OTHER_LIBRARIES: Record<string, string> = { "libstdc++.so.6": "libstdc++6", "libgcc_s.so.1": "libgcc-s1" };

/** Whether dotted version a (2.17) is newer than b ("" is older than any). */
function newer(a: string, b: string): boolean {
  const [x, y] = [a.split(".").map(Number), b ? b.split(".").map(Number) : []];
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
}

/**
 * The Depends of an executable: each library's package, libc6 at least the newest GLIBC_x.y symbol version it
 * asks for (glibc's symbols file maps a GLIBC_x.y symbol to libc6 (>= x.y)). Refuses a musl executable and a
 * library it doesn't know the package of: a guessed Depends would install and then fail to start.
 */
export function dependsOf(elf: ElfNeeds): string[] {
  if (elf.interpreter !== undefined && !/\/ld-linux-(x86-64|aarch64)\.so\.[12]$/.test(elf.interpreter))
    throw new Error(`the executable's loader is ${elf.interpreter}, not glibc's: only a glibc build can be a .deb`);
  let glibc = "";
  const others = new Set<string>();
  for (const lib of elf.needed) {
    if (GLIBC.test(lib)) {
      for (const v of elf.versions.get(lib) ?? []) {
        const m = /^GLIBC_([0-9.]+)$/.exec(v);
        if (m && newer(m[1] as string, glibc)) glibc = m[1] as string;
      }
    } else if (OTHER_LIBRARIES[lib]) others.add(OTHER_LIBRARIES[lib] as string);
    else throw new Error(`the executable needs ${lib}, whose Debian package packaging/deb.ts doesn't know: add it`);
  }
  return [glibc ? `libc6 (>= ${glibc})` : "libc6", ...others];
}

/** A unit file of deploy/ started from /usr/bin instead of /usr/local/bin, its own header replaced by `header`. */
function fromUsrBin(unit: string, name: string, header: string[]): string {
  const exec = /^ExecStart=\/usr\/local\/bin\/hub-agent /m;
  if (!exec.test(unit))
    throw new Error(`deploy/${name} no longer starts /usr/local/bin/hub-agent: update packaging/deb.ts`);
  const body = unit.slice(unit.indexOf("[Unit]")).replace(exec, "ExecStart=/usr/bin/hub-agent ");
  return header.join("\n") + "\n" + body;
}

/** The shipped unit, started from /usr/bin and with a header for the package's operator. */
export function packagedUnit(unit: string): string {
  return fromUsrBin(unit, "hub-agent.service", [
    "# hub-agent as a systemd service, installed by the hub-agent Debian package: `hub-agent run` as the user",
    "# hub-agent, its store in /var/lib/hub-agent, its configuration in /etc/hub-agent/hub-agent.toml. The package",
    "# starts nothing: fill in the configuration, check it with",
    "#   sudo -u hub-agent hub-agent doctor --config /etc/hub-agent/hub-agent.toml",
    "# then `systemctl enable --now hub-agent`. Why each setting is what it is: docs/packaging.md §1.",
    "# One process per server instead: hub-agent@.service beside this file.",
    "#",
    "# Local changes go in a drop-in (`systemctl edit hub-agent`), e.g. the directory of a wrapped game server:",
    "#   [Service]",
    "#   ReadWritePaths=/srv/minecraft",
    "",
  ]);
}

/** The shipped template unit (one process per server): from /usr/bin too, its header for the package's operator. */
export function packagedTemplate(unit: string): string {
  return fromUsrBin(unit, "hub-agent@.service", [
    "# hub-agent, one process per server, installed by the hub-agent Debian package: the instance hub-agent@<name>",
    "# runs `hub-agent run --server <name>`, the server of /etc/hub-agent/servers.d/<name>.toml over the shared",
    "# /etc/hub-agent/hub-agent.toml, as the user hub-agent, its store /var/lib/hub-agent/servers/<name>. Every",
    "# setting is hub-agent.service's but Description= and ExecStart=. When to choose it: docs/running.md, \"Several",
    "# servers on one host\". The package starts nothing: fill in the server's file, then",
    "#   systemctl enable --now hub-agent@<name>",
    "# Not together with hub-agent.service, which runs every server of servers.d: keep it disabled",
    "# (`systemctl disable --now hub-agent`). A server's store stays with the run that took it first: an instance",
    "# started second exits 7, not restarted; hub-agent.service started second tries that server again and again.",
    "#",
    "# Local changes go in a drop-in: `systemctl edit hub-agent@<name>` for one server, e.g. the directory of a",
    "# wrapped game server:",
    "#   [Service]",
    "#   ReadWritePaths=/srv/minecraft",
    "# For all of them, a file of another name than override.conf in /etc/systemd/system/hub-agent@.service.d/",
    "# (all.conf, say): systemd reads a drop-in's name once, the instance's.",
    "",
  ]);
}

/** The configuration `hub-agent init` writes, with the service's store, so one-shot commands share its queues. */
export const packagedConfig = (): string => renderTemplate({ "storage.dir": STORE });

/** RFC 2822 as Debian changelogs write it; SOURCE_DATE_EPOCH (reproducible builds) when set. */
function changelogDate(): string {
  const epoch = process.env.SOURCE_DATE_EPOCH;
  const date = epoch ? new Date(Number(epoch) * 1000) : new Date();
  return date.toUTCString().replace("GMT", "+0000");
}

function changelogDebian(version: string): string {
  return [
    `${NAME} (${debianVersion(version)}) unstable; urgency=medium`,
    "",
    `  * Version ${version}, packaged from the hub-agent repository (see changelog.gz).`,
    "",
    ` -- ${MAINTAINER}  ${changelogDate()}`,
    "",
  ].join("\n");
}

function control(o: DebOptions, depends: string[], installedSize: number): string {
  return [
    `Package: ${NAME}`,
    `Version: ${debianVersion(o.version)}`,
    `Architecture: ${o.arch}`,
    `Maintainer: ${MAINTAINER}`,
    `Installed-Size: ${installedSize}`,
    `Depends: ${[...depends, "adduser"].join(", ")}`,
    "Section: net",
    "Priority: optional",
    "Description: connects a game server to VyHub from outside the game",
    " hub-agent runs beside a game server and talks to it through the game's",
    " console (Source RCON, Quake 3 and DarkPlaces rcon, Rust WebRCON, Teeworlds",
    " econ, a plugin, or the server started as its child). It delivers VyHub's",
    " bans, warnings and rewards to the game exactly once, reports players,",
    " playtime and the server's status, and keeps what VyHub has not received",
    " yet in a durable queue.",
    " .",
    " The package installs the service disabled: fill in",
    " /etc/hub-agent/hub-agent.toml, then enable it.",
    "",
  ].join("\n");
}

/** Every file under `dir`, relative to it. */
function walk(dir: string, under = ""): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(dir, join(under, e.name)) : [join(under, e.name)],
  );
}

/** Builds the package; returns its path. */
export async function buildDeb(o: DebOptions): Promise<string> {
  const expected = ARCHES[o.arch];
  if (expected === undefined) throw new Error(`--arch must be one of ${Object.keys(ARCHES).join(", ")}`);
  if (!["xz", "gzip", "none"].includes(o.compression ?? "gzip"))
    throw new Error("--compression must be xz, gzip or none");
  const exe = new Uint8Array(readFileSync(o.binary));
  const elf = readElfNeeds(exe);
  if (elf.machine !== expected)
    throw new Error(`${o.binary} is not an ${o.arch} executable (ELF machine ${elf.machine})`);
  const depends = dependsOf(elf);

  const stage = mkdtempSync(join(tmpdir(), "hub-deb-"));
  try {
    const put = (path: string, data: string | Uint8Array, mode = 0o644) => {
      const file = join(stage, path);
      mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
      writeFileSync(file, data);
      chmodSync(file, mode);
    };
    const debian = (name: string) => readFileSync(join(DEBIAN, name));
    const gz = (data: string | Uint8Array) => gzipSync(data, { level: 9 }); // no name, no time: as gzip -9n
    const doc = `usr/share/doc/${NAME}`;

    put("usr/bin/hub-agent", exe, 0o755);
    put(UNIT.slice(1), packagedUnit(readFileSync(join(ROOT, "deploy", "hub-agent.service"), "utf8")));
    put(TEMPLATE.slice(1), packagedTemplate(readFileSync(join(ROOT, "deploy", "hub-agent@.service"), "utf8")));
    // 0640 from the first moment: it will hold the API key. postinst gives it the group hub-agent.
    put(CONFFILE.slice(1), packagedConfig(), 0o640);
    put(`${doc}/copyright`, debian("copyright"));
    put(`${doc}/changelog.Debian.gz`, gz(changelogDebian(o.version)));
    put(`${doc}/changelog.gz`, gz(readFileSync(join(ROOT, "CHANGELOG.md"))));
    put("usr/share/man/man1/hub-agent.1.gz", gz(debian("hub-agent.1")));
    put(`usr/share/lintian/overrides/${NAME}`, debian("lintian-overrides"));

    const files = walk(stage);
    const md5sums = files
      .filter((f) => `/${f}` !== CONFFILE) // dpkg keeps conffiles' sums itself, as dh_md5sums leaves them out
      .sort()
      .map(
        (f) =>
          `${createHash("md5")
            .update(readFileSync(join(stage, f)))
            .digest("hex")}  ${f}\n`,
      )
      .join("");
    // dpkg-gencontrol's measure: each file's size in KiB rounded up, and 1 for each directory.
    const dirs = new Set(
      files.flatMap((f) =>
        f
          .split("/")
          .slice(0, -1)
          .map((_, i, p) => p.slice(0, i + 1).join("/")),
      ),
    );
    const installedSize = files.reduce((n, f) => n + Math.ceil(statSync(join(stage, f)).size / 1024), dirs.size);

    put("DEBIAN/control", control(o, depends, installedSize));
    put("DEBIAN/conffiles", `${CONFFILE}\n`);
    put("DEBIAN/md5sums", md5sums);
    for (const script of ["postinst", "prerm", "postrm"]) put(`DEBIAN/${script}`, debian(script), 0o755);
    // Every directory 0755 whatever the umask (mkdir's mode is masked by it; dpkg-deb refuses a DEBIAN/ below 0755).
    for (const dir of ["", "DEBIAN", ...dirs]) chmodSync(join(stage, dir), 0o755);

    mkdirSync(o.out, { recursive: true });
    const deb = resolve(o.out, `${NAME}_${debianVersion(o.version)}_${o.arch}.deb`);
    const p = Bun.spawn(["dpkg-deb", "--root-owner-group", `-Z${o.compression ?? "gzip"}`, "--build", stage, deb], {
      stdout: "ignore",
      stderr: "pipe",
    });
    if ((await p.exited) !== 0) throw new Error(`dpkg-deb failed: ${(await new Response(p.stderr).text()).trim()}`);
    return deb;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      binary: { type: "string" },
      arch: { type: "string" },
      version: { type: "string" },
      out: { type: "string" },
      compression: { type: "string" },
    },
  });
  const usage =
    "usage: bun packaging/deb.ts --binary PATH --arch amd64|arm64 --version X --out DIR [--compression gzip|xz|none]";
  if (!values.binary || !values.arch || !values.version || !values.out) {
    console.error(usage);
    process.exit(2);
  }
  try {
    const deb = await buildDeb({
      binary: values.binary,
      arch: values.arch as Arch,
      version: values.version,
      out: values.out,
      compression: (values.compression ?? "gzip") as Compression,
    });
    const shown = relative(process.cwd(), deb);
    console.log(shown.startsWith("..") ? deb : shown);
  } catch (e) {
    console.error(`deb: ${(e as Error).message}`);
    process.exit(1);
  }
}
