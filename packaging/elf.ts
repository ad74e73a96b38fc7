/**
 * What an executable needs from the system it runs on, read from its ELF headers: the machine, the program
 * interpreter, the shared libraries (DT_NEEDED) and the symbol versions it requires of each (GLIBC_2.17, …).
 * Read here rather than by `readelf` or `dpkg-shlibdeps`, which would need binutils and, for another
 * architecture, that architecture's libraries installed. 64-bit little-endian only: every target we build.
 */

export const EM_X86_64 = 62;
export const EM_AARCH64 = 183;

export interface ElfNeeds {
  machine: number;
  /** PT_INTERP, e.g. "/lib64/ld-linux-x86-64.so.2"; undefined for a static executable. */
  interpreter?: string;
  /** DT_NEEDED, in order. */
  needed: string[];
  /** Library file → the version names required of it (SHT_GNU_verneed). */
  versions: Map<string, string[]>;
}

const PT_INTERP = 3;
const SHT_DYNAMIC = 6;
const SHT_GNU_VERNEED = 0x6ffffffe;
const DT_NEEDED = 1n;

export function readElfNeeds(bytes: Uint8Array): ElfNeeds {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(0) !== 0x7f454c46) throw new Error("not an ELF file");
  if (bytes[4] !== 2 || bytes[5] !== 1) throw new Error("not a 64-bit little-endian ELF file");
  const u16 = (o: number) => dv.getUint16(o, true);
  const u32 = (o: number) => dv.getUint32(o, true);
  const u64 = (o: number) => Number(dv.getBigUint64(o, true));
  const cstring = (o: number) => new TextDecoder().decode(bytes.subarray(o, bytes.indexOf(0, o)));

  const needs: ElfNeeds = { machine: u16(0x12), needed: [], versions: new Map() };
  const [phoff, phentsize, phnum] = [u64(0x20), u16(0x36), u16(0x38)];
  for (let i = 0; i < phnum; i++) {
    const ph = phoff + i * phentsize;
    if (u32(ph) === PT_INTERP) needs.interpreter = cstring(u64(ph + 0x08));
  }

  const [shoff, shentsize, shnum] = [u64(0x28), u16(0x3a), u16(0x3c)];
  const section = (i: number) => {
    const sh = shoff + i * shentsize;
    return {
      type: u32(sh + 4),
      offset: u64(sh + 0x18),
      size: u64(sh + 0x20),
      link: u32(sh + 0x28),
      info: u32(sh + 0x2c),
    };
  };
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    const strings = section(s.link).offset; // both sections name their strings in .dynstr, their sh_link
    if (s.type === SHT_DYNAMIC) {
      for (let o = s.offset; o < s.offset + s.size; o += 16) {
        if (dv.getBigInt64(o, true) === DT_NEEDED) needs.needed.push(cstring(strings + u64(o + 8)));
      }
    } else if (s.type === SHT_GNU_VERNEED) {
      // Elf64_Verneed { vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32 }, each followed by
      // vn_cnt Elf64_Vernaux { vna_hash u32, vna_flags u16, vna_other u16, vna_name u32, vna_next u32 }.
      let vn = s.offset;
      for (let n = 0; n < s.info; n++) {
        const names: string[] = [];
        let aux = vn + u32(vn + 8);
        for (let a = 0; a < u16(vn + 2); a++) {
          names.push(cstring(strings + u32(aux + 8)));
          aux += u32(aux + 12);
        }
        needs.versions.set(cstring(strings + u32(vn + 4)), names);
        vn += u32(vn + 12);
      }
    }
  }
  return needs;
}
