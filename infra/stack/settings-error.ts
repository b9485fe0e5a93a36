/** A setting of the stack out of its range: `cdk synth` says it in one line (infra/app.ts), not as a stack trace. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}
