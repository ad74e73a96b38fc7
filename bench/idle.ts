// The baseline for bench/load.ts: a compiled Bun program that stays alive, idle, for BENCH_SECONDS.
setTimeout(() => {}, Number(process.env.BENCH_SECONDS ?? 60) * 1000);
