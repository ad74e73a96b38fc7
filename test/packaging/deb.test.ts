/**
 * The Debian package (packaging/deb.ts) as an operator meets it, in a throwaway Debian root (debian-root.ts):
 * installed, configured, `doctor` run as the service user, a ban queued while VyHub is down, upgraded over by a
 * newer build with that ban still queued and then delivered, the unit and its template (hub-agent@.service) verified
 * as installed, removed, purged (the user, /etc/hub-agent and the enablement links gone, the store kept) and
 * installed again on the kept store. Also lintian: no error and no
 * warning beyond the justified overrides (deploy/debian/lintian-overrides), for the amd64 and the arm64 package.
 *
 * The packages are built uncompressed here (a second, not the 20 s gzip takes on this machine); dpkg reads them
 * the same. Skipped, with the reason printed, where a root can't be made (not root, no unshare or overlay)
 * or lintian is missing (.ci/run installs it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { renderTemplate } from "../../lib/app/config.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { buildDeb, CONFFILE, STORE, TEMPLATE, UNIT, dependsOf } from "../../packaging/deb.ts";
import { readElfNeeds } from "../../packaging/elf.ts";
import { archiveName } from "../../packaging/release.ts";
import { binary } from "../cli/binary.ts";
import { runToEnd } from "../support/procs.ts";
import { DebianRoot, debianRootMissing } from "./debian-root.ts";
import { releaseOnce } from "./release-build.ts";

const KEY = "deb-test-key-0c61a9e2f4";
const ALICE = SEED_IDS.steamid64.alice;
const DOWN = "http://127.0.0.1:1/sandbox/v1";
const OLD = `${pkg.version}~old`; // an older build of this version: 0.1.0~old-1 sorts before 0.1.0-1

const noRoot = await debianRootMissing();
if (noRoot) console.warn(`SKIPPED: the Debian package install test needs ${noRoot}`);
const noLintian = Bun.which("lintian") ? undefined : "lintian (apt-get install lintian; .ci/run installs it)";
if (noLintian) console.warn(`SKIPPED: the lintian check needs ${noLintian}`);
const noDpkgDeb = Bun.which("dpkg-deb") ? undefined : "dpkg-deb (Debian's dpkg)";
if (noDpkgDeb) console.warn(`SKIPPED: the Debian package tests need ${noDpkgDeb}`);

/**
 * The arm64 executable `npm run release` made (built once per test run, shared with release.test.ts and
 * install-walk.test.ts; Bun fetches its arm64 runtime from the npm registry the first time), or why there is none.
 */
async function arm64Executable(): Promise<{ exe: string } | { missing: string }> {
  const out = await releaseOnce().catch((e: Error) => e);
  if (out instanceof Error) return { missing: `a release build (${out.message.trim()})` };
  const into = mkdtempSync(join(tmpdir(), "hub-arm64-"));
  const r = await runToEnd(["tar", "-xzf", join(out, archiveName(pkg.version, "linux-arm64")), "-C", into]);
  if (r.code !== 0) return { missing: `the arm64 archive unpacked (${r.stderr.trim()})` };
  return { exe: join(into, archiveName(pkg.version, "linux-arm64").replace(/\.tar\.gz$/, ""), "hub-agent") };
}
const arm64 = noDpkgDeb || noLintian ? { missing: "dpkg-deb and lintian" } : await arm64Executable();
if ("missing" in arm64) console.warn(`SKIPPED: the arm64 package check needs ${arm64.missing}`);

let out: string;
let oldDeb: string;
let newDeb: string;
beforeAll(async () => {
  if (noDpkgDeb) return;
  out = mkdtempSync(join(tmpdir(), "hub-debs-"));
  const exe = await binary();
  const build = (version: string) => buildDeb({ binary: exe, arch: "amd64", version, out, compression: "none" });
  [oldDeb, newDeb] = await Promise.all([build(OLD), build(pkg.version)]);
}, 180_000);
afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
  if ("exe" in arm64) rmSync(join(arm64.exe, "..", ".."), { recursive: true, force: true });
});

describe.skipIf(noDpkgDeb !== undefined)("the package's contents", () => {
  test("Depends come from the executable's ELF needs: libc6 at least the newest GLIBC_ version it asks for", async () => {
    const elf = readElfNeeds(new Uint8Array(await Bun.file(await binary()).arrayBuffer()));
    expect(elf.needed).toContain("libc.so.6");
    const depends = dependsOf(elf);
    expect(depends).toHaveLength(1);
    expect(depends[0]).toMatch(/^libc6 \(>= 2\.\d+\)$/);
    const info = await runToEnd(["dpkg-deb", "--field", newDeb, "Depends", "Version", "Architecture"]);
    expect(info.stdout).toBe(`Depends: ${depends[0]}, adduser\nVersion: ${pkg.version}-1\nArchitecture: amd64\n`);
  });

  test("a musl executable or an unknown library is refused, not guessed", () => {
    const musl = { machine: 62, interpreter: "/lib/ld-musl-x86_64.so.1", needed: ["libc.so"], versions: new Map() };
    expect(() => dependsOf(musl)).toThrow("not glibc's");
    const odd = {
      machine: 62,
      interpreter: "/lib64/ld-linux-x86-64.so.2",
      needed: ["libfoo.so.1"],
      versions: new Map(),
    };
    expect(() => dependsOf(odd)).toThrow("libfoo.so.1");
  });

  test("an executable of another architecture is refused", async () => {
    const r = buildDeb({ binary: await binary(), arch: "arm64", version: pkg.version, out, compression: "none" });
    expect(r).rejects.toThrow("is not an arm64 executable");
  });

  test.skipIf(noLintian !== undefined)(
    "lintian: no error, no warning (the overrides each say why)",
    async () => expect(await lintian(newDeb)).toEqual([]),
    180_000,
  );

  test.skipIf("missing" in arm64)(
    "the arm64 package: its Architecture, Depends from the arm64 executable, and lintian as clean",
    async () => {
      const exe = (arm64 as { exe: string }).exe;
      const deb = await buildDeb({ binary: exe, arch: "arm64", version: pkg.version, out, compression: "none" });
      const info = await runToEnd(["dpkg-deb", "--field", deb, "Architecture", "Depends"]);
      expect(info.stdout).toMatch(/^Architecture: arm64\nDepends: libc6 \(>= 2\.\d+\), adduser\n$/);
      expect(await lintian(deb)).toEqual([]);
    },
    180_000,
  );
});

describe.skipIf(noRoot !== undefined || noDpkgDeb !== undefined)("installed in a throwaway Debian root", () => {
  let root: DebianRoot;
  let sb: Sandbox;
  let uid: string;
  const asUser = (args: string) => `runuser -u hub-agent -- hub-agent ${args} --config ${CONFFILE}`;

  beforeAll(async () => {
    sb = await startSandbox({ key: KEY });
    root = new DebianRoot();
    await Bun.write(join(root.shared, "old.deb"), Bun.file(oldDeb));
    await Bun.write(join(root.shared, "new.deb"), Bun.file(newDeb));
    await root.prepare();
    // A clean slate whatever this machine holds (the package, or a hand install's user and store, as docs/running.md
    // describes): the root starts as a copy of it.
    await root.ok(
      "dpkg -P hub-agent >/dev/null 2>&1 || true; rm -rf /etc/hub-agent /var/lib/hub-agent\n" +
        "if getent passwd hub-agent >/dev/null; then userdel hub-agent; fi\n" +
        "if getent group hub-agent >/dev/null; then groupdel hub-agent; fi",
    );
  }, 60_000);
  afterAll(async () => {
    await sb?.stop();
    root?.remove();
  });

  test("install: the executable, the unit and its template, the conffile 0640 root:hub-agent, the system user; nothing started", async () => {
    await root.ok("dpkg -i /mnt/shared/old.deb");
    const passwd = await root.ok("getent passwd hub-agent");
    expect(passwd).toMatch(new RegExp(`^hub-agent:x:\\d+:\\d+::${STORE}:/usr/sbin/nologin\\n$`));
    uid = passwd.split(":")[2] as string;
    expect(await root.ok(`stat -c '%a %U:%G %n' ${CONFFILE} ${STORE} /usr/bin/hub-agent ${UNIT} ${TEMPLATE}`)).toBe(
      [
        `640 root:hub-agent ${CONFFILE}`,
        `700 hub-agent:hub-agent ${STORE}`,
        "755 root:root /usr/bin/hub-agent",
        `644 root:root ${UNIT}`,
        `644 root:root ${TEMPLATE}`,
        "",
      ].join("\n"),
    );
    expect(await root.ok("grep ^ExecStart= " + UNIT)).toBe("ExecStart=/usr/bin/hub-agent run\n");
    expect(await root.ok("grep ^ExecStart= " + TEMPLATE)).toBe("ExecStart=/usr/bin/hub-agent run --server %i\n");
    expect(await root.ok(`dpkg-query -W -f='\${Conffiles}' hub-agent`)).toContain(CONFFILE);
    expect(await root.ok("hub-agent --version")).toBe(`${pkg.version}\n`);
    // Neither started nor enabled: the configuration is a template until the operator fills it in.
    expect(await root.systemdCalls()).toEqual(["systemctl --system daemon-reload"]);
    expect((await root.run("test -e /etc/systemd/system/multi-user.target.wants/hub-agent.service")).code).toBe(1);

    // Installing again changes nothing: the same user.
    await root.ok("dpkg -i /mnt/shared/old.deb");
    expect(await root.ok("id -u hub-agent")).toBe(`${uid}\n`);
    await root.systemdCalls();
  }, 60_000);

  test("configured: doctor passes as the service user, who may read the file; other users may not", async () => {
    const filled = renderTemplate({
      "api.url": sb.url,
      "api.key": KEY,
      "api.server_id": sb.serverId,
      "game.bridge": "sim",
      "storage.dir": STORE,
    });
    await root.ok(`cat >${CONFFILE}`, filled); // as an editor does: the file keeps its owner and mode
    const doctor = await root.run(asUser("doctor"));
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect((await root.run(`runuser -u nobody -- cat ${CONFFILE}`)).code).not.toBe(0);
  }, 60_000);

  test("upgrade over an older build: the ban queued before it is still there, and delivered after it", async () => {
    await root.ok(asUser(`warns ${ALICE}`)); // caches the server record: a ban can be queued while VyHub is down
    const queued = await root.run(`HUB_API_URL=${DOWN} ${asUser(`ban ${ALICE} 30m kept across the upgrade --json`)}`);
    expect(queued.code, queued.stderr).toBe(6);
    const entry = JSON.parse(queued.stdout).entry_id as string;
    const conffile = await root.ok(`md5sum ${CONFFILE}`);

    const upgrade = await root.run("dpkg -i /mnt/shared/new.deb");
    expect(upgrade.code, upgrade.stdout + upgrade.stderr).toBe(0);
    expect(upgrade.stdout).toContain(`Unpacking hub-agent (${pkg.version}-1) over (${OLD}-1)`);
    // A running service, and each running instance of the template, is restarted on the new executable; a stopped
    // one stays stopped (try-restart).
    expect(await root.systemdCalls()).toEqual([
      "systemctl --system daemon-reload",
      "deb-systemd-invoke try-restart hub-agent.service",
      "deb-systemd-invoke try-restart hub-agent@*.service",
    ]);
    expect(await root.ok(`md5sum ${CONFFILE}`)).toBe(conffile); // the operator's configuration, untouched
    expect(await root.ok(`stat -c '%a %U:%G' ${CONFFILE}`)).toBe("640 root:hub-agent\n");
    expect(await root.ok("id -u hub-agent")).toBe(`${uid}\n`);

    const status = JSON.parse(await root.ok(asUser("queue status --json")));
    const bans = status.queues.find((q: { queue: string }) => q.queue === "ban");
    expect(bans.items.map((i: { id: string }) => i.id)).toEqual([entry]);

    const before = [...sb.state.bans.values()].filter((b) => b.user_id === SEED_IDS.users.alice).length;
    const once = await root.run(asUser("run --once --json"));
    expect(once.code, once.stdout + once.stderr).toBe(0);
    const after = [...sb.state.bans.values()].filter((b) => b.user_id === SEED_IDS.users.alice);
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toMatchObject({ reason: "kept across the upgrade", length: 1800 });
    const left = JSON.parse(await root.ok(asUser("queue status --json")));
    expect(left.queues.find((q: { queue: string }) => q.queue === "ban").entries).toBe(0);
  }, 120_000);

  test.skipIf(!Bun.which("systemd-analyze"))(
    "systemd-analyze verify passes on the unit and an instance of its template as the package installed them",
    async () => {
      const r = await root.run(`systemd-analyze verify ${UNIT}`);
      expect(r.stdout + r.stderr).not.toContain("hub-agent.service");
      expect(r.code).toBe(0);
      // verify checks a template only as an instance: the installed file, copied under an instance's name.
      const instance = "/tmp/verify/hub-agent@example.service";
      const t = await root.run(`mkdir /tmp/verify && cp ${TEMPLATE} ${instance} && systemd-analyze verify ${instance}`);
      expect(t.stdout + t.stderr).not.toContain("hub-agent@");
      expect(t.code).toBe(0);
    },
    60_000,
  );

  test("remove stops the service and its instances; purge removes the user, the group, /etc/hub-agent and the enablement links, and keeps the store", async () => {
    await root.ok("echo HUB_LANG=de >/etc/hub-agent/environment"); // the operator's own file beside the conffile
    // What `systemctl enable hub-agent hub-agent@eu-1` leaves (systemd does not run here to make them itself).
    const wants = "/etc/systemd/system/multi-user.target.wants";
    await root.ok(
      `mkdir -p ${wants} && ln -s ${UNIT} ${wants}/hub-agent.service && ln -s ${TEMPLATE} ${wants}/hub-agent@eu-1.service`,
    );
    await root.ok("dpkg -r hub-agent");
    expect(await root.systemdCalls()).toEqual([
      "deb-systemd-invoke stop hub-agent.service",
      "deb-systemd-invoke stop hub-agent@*.service",
      "systemctl --system daemon-reload",
    ]);
    expect(await root.ok(`test ! -e /usr/bin/hub-agent && test -e ${CONFFILE} && id -u hub-agent`)).toBe(`${uid}\n`);

    await root.ok("dpkg -P hub-agent");
    expect(await root.run("getent passwd hub-agent || getent group hub-agent")).toMatchObject({ code: 2, stdout: "" });
    expect((await root.run("test -e /etc/hub-agent")).code).toBe(1);
    expect(await root.ok(`ls -A ${wants} | grep hub-agent || true`)).toBe(""); // both enablement links gone
    expect(await root.ok("dpkg-statoverride --list")).not.toContain(CONFFILE);
    // The store is kept (its directory root's now: no later user with the old uid can reach it).
    expect(await root.ok(`stat -c '%a %U:%G' ${STORE}`)).toBe("700 root:root\n");
    expect(await root.ok(`find ${STORE} -type f | wc -l`)).not.toBe("0\n");
    await root.systemdCalls();
  }, 60_000);

  test("installed again after a purge: the kept store is the new user's", async () => {
    await root.ok("dpkg -i /mnt/shared/new.deb");
    expect(await root.ok(`find ${STORE} ! -user hub-agent | wc -l`)).toBe("0\n");
    expect(await root.ok(`stat -c '%a' ${STORE}`)).toBe("700\n");
  }, 60_000);
});

/**
 * lintian's error and warning lines about a package built here (uncompressed, for speed: the shipped one is gzip,
 * which the two tags left out are about).
 */
async function lintian(deb: string): Promise<string[]> {
  const tags = "uses-no-compression-for-control-tarball,uses-no-compression-for-data-tarball";
  const r = await runToEnd(["lintian", "--pedantic", "--suppress-tags", tags, deb]);
  return [...r.stdout.split("\n").filter((l) => /^[EW]:/.test(l)), ...(r.code === 0 ? [] : [`exit ${r.code}`])];
}
