/** The commands the tool tells the operator to run, spelled with the flags the operator is using (never a token). */
import type { Io } from './io';

export interface HintValues {
  apply?: boolean;
  'admin-url'?: string;
  timeout?: string;
  file?: string;
  'keys-file'?: string;
}

export interface Hints {
  /** Whether this run sends its change to Kong. */
  applied: boolean;
  /**
   * `keys <words>` with the operator's --file/--keys-file; `kong`: 'apply' adds --apply --admin-url,
   * 'read' only --admin-url (keys status), 'none' neither; by default as this run.
   */
  command(words: string[], kong?: 'apply' | 'read' | 'none'): string;
}

export function hintsFor(values: HintValues, io: Io): Hints {
  const files = [
    ...(values.file ? ['--file', values.file] : []),
    ...(values['keys-file'] ? ['--keys-file', values['keys-file']] : []),
  ];
  const url = values['admin-url'] ?? (io.env.KONG_ADMIN_URL ? undefined : 'URL');
  const admin = [...(url ? ['--admin-url', url] : []), ...(values.timeout ? ['--timeout', values.timeout] : [])];
  const applied = values.apply === true;
  return {
    applied,
    command: (words, kong = applied ? 'apply' : 'none') =>
      ['keys', ...words, ...(kong === 'apply' ? ['--apply', ...admin] : kong === 'read' ? admin : []), ...files].join(
        ' ',
      ),
  };
}
