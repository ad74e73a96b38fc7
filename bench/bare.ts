// The baseline: a compiled Bun program that prints one line.
console.log("hi");
