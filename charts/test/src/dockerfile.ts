/** One Dockerfile instruction, continuation lines joined, comments dropped. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
}

/** The instructions of a Dockerfile, grouped by build stage (each stage starts with its FROM). */
export interface Dockerfile {
  /** ARGs before the first FROM: the only ones FROM lines may use. */
  readonly globalArgs: readonly Instruction[];
  readonly stages: readonly (readonly Instruction[])[];
}

/** Parses the subset of Dockerfile syntax the repository uses: `\` continuations, `#` comments, no heredocs. */
export const parseDockerfile = (text: string): Dockerfile => {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (line.startsWith('#')) return;
    if (pending === '') startLine = index + 1;
    const continued = line.endsWith('\\');
    pending += `${continued ? line.slice(0, -1) : line} `;
    if (continued) return;
    const [keyword = '', ...rest] = pending.trim().split(/\s+/);
    instructions.push({ keyword: keyword.toUpperCase(), args: rest.join(' '), line: startLine });
    pending = '';
  });
  const firstFrom = instructions.findIndex(({ keyword }) => keyword === 'FROM');
  const globalArgs = instructions.slice(0, firstFrom === -1 ? instructions.length : firstFrom);
  const stages: Instruction[][] = [];
  for (const instruction of instructions.slice(globalArgs.length)) {
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return { globalArgs, stages };
};

/** Names that suggest a credential; none may be baked into an image through ENV or ARG. */
export const SECRET_LOOKING_NAME =
  /SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL|ACCESS_?KEY/i;

/** `NAME=value` pairs (or the legacy `NAME value`) of an ENV or ARG instruction. */
export const declaredNames = (instruction: Instruction): string[] => {
  if (instruction.keyword === 'ARG') return [instruction.args.split('=')[0]!.trim()];
  if (!instruction.args.includes('=')) return [instruction.args.split(/\s+/)[0]!];
  return [...instruction.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=/g)].map((match) => match[1]!);
};
