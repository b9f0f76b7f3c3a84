/** The command table, in the order `keys --help` lists them. */
import type { Command } from './command';
import { disable } from './disable';
import { enable } from './enable';
import { issue } from './issue';
import { list } from './list';
import { reconcile } from './reconcile';
import { revoke } from './revoke';
import { rotate } from './rotate';
import { scope } from './scope';
import { status } from './status';
import { sync } from './sync';

export const COMMANDS: readonly Command[] = [
  issue,
  scope,
  disable,
  enable,
  rotate,
  revoke,
  list,
  status,
  reconcile,
  sync,
];
