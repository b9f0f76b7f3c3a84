/**
 * For scripts/test.sh: which Kong the real-Kong tier runs, or why it is skipped. Prints two lines:
 * the KONG_HOME to export (or "-"), then the sentence for the tier's line.
 */
import { findKong } from '../../harness/real-kong';

if (process.env.REAL_KONG === 'off') {
  console.log('-');
  console.log('turned off (REAL_KONG=off)');
  process.exit(0);
}
const kong = findKong();
if (kong.found) {
  console.log(kong.env.KONG_HOME ?? '-');
  console.log(`${kong.description}`);
} else {
  console.log('-');
  console.log(`no Kong 3.9 found (${kong.reason})`);
}
