/** gpuctl's exit codes: a script tells the class of a failure without reading the message. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  unauthorized: 3,
  notFound: 4,
  paymentRequired: 5,
  conflict: 6,
  unavailable: 7,
  invalid: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of an HTTP error status; statuses with no class of their own (400, 413, 500...) are unexpected. */
export function exitCodeOf(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.unauthorized;
  if (status === 404) return EXIT.notFound;
  if (status === 402) return EXIT.paymentRequired;
  if (status === 409) return EXIT.conflict;
  if (status === 429 || status === 503) return EXIT.unavailable;
  if (status === 422) return EXIT.invalid;
  return EXIT.unexpected;
}

/** A failure gpuctl expects and explains: its message goes to stderr, its code is the exit status. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
