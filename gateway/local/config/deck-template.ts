/** decK's one template action our state files use, `env "DECK_NAME"`, rendered over the raw text as decK renders it (go-database-reconciler pkg/file/readfile.go). */
export class DeckTemplateError extends Error {}

const ACTION = /\$\{\{\s*env\s+"([^"\\]*)"\s*\}\}/g;

/** Go's text/template position: state:line:column (column 0-based, in bytes). */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  return `state:${before.split('\n').length}:${Buffer.byteLength(before.slice(before.lastIndexOf('\n') + 1))}`;
}

export function renderDeckTemplate(text: string, env: NodeJS.ProcessEnv): string {
  const rendered = text.replace(ACTION, (action, name: string, offset: number) => {
    const at = `template: ${position(text, offset + action.indexOf('env'))}: executing "state" at <env "${name}">: error calling env: `;
    if (!name.startsWith('DECK_'))
      throw new DeckTemplateError(
        `${at}environment variables in the state file must be prefixed with 'DECK_', found: '${name}'`,
      );
    const value = env[name];
    if (value === undefined)
      throw new DeckTemplateError(`${at}environment variable '${name}' present in state file but not set`);
    return value;
  });
  const other = rendered.indexOf('${{');
  if (other !== -1)
    throw new DeckTemplateError(
      `template: ${position(rendered, other)}: the local gateway renders only env "DECK_..." actions`,
    );
  return rendered;
}
