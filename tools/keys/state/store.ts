/** partners.yaml and partner-keys.yaml read together as one list of partners, checked against each other, edited in place. */
import { isMap, isSeq, Scalar, YAMLMap, YAMLSeq, type Document } from 'yaml';
import { Failure } from '../cli/errors';
import { CONSUMER_TAGS, envReference, keyVariable, KNOWN_GROUPS, parseEnvReference } from '../partner';
import { checked, readDocument, writeDocuments, type StateDocument } from './document';
import { KeysState, PartnersState } from './schema';

export interface Credential {
  id: string;
  /** The decK variable holding the key (in the secret manager, never in a file). */
  variable: string;
}

export interface Partner {
  name: string;
  id: string;
  customId?: string;
  groups: string[];
  credentials: Credential[];
}

export interface StorePaths {
  partners: string;
  keys: string;
}

function duplicate(values: string[]): string | undefined {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) return v;
    seen.add(v);
  }
  return undefined;
}

function consumersSeq(doc: Document): YAMLSeq {
  let seq = doc.get('consumers');
  if (!isSeq(seq)) {
    seq = new YAMLSeq();
    doc.set('consumers', seq);
  }
  const s = seq as YAMLSeq;
  // `consumers: []` in the committed file: the first partner turns it into a block list.
  s.flow = false;
  return s;
}

function consumerNode(doc: Document, name: string): YAMLMap {
  const seq = doc.get('consumers');
  const node = isSeq(seq) ? seq.items.find((item) => isMap(item) && item.get('username') === name) : undefined;
  if (!isMap(node)) throw new Failure(`internal: consumer ${name} not found in the document`);
  return node;
}

function listIn(map: YAMLMap, key: string): YAMLSeq {
  let seq = map.get(key);
  if (!isSeq(seq)) {
    seq = new YAMLSeq();
    map.set(key, seq);
  }
  (seq as YAMLSeq).flow = false;
  return seq as YAMLSeq;
}

export class PartnerStore {
  private constructor(
    private readonly partnersDoc: StateDocument,
    private readonly keysDoc: StateDocument,
    private list: Partner[],
  ) {}

  /** Reads and checks both files; any problem is a Failure naming the file and the place. */
  static load(paths: StorePaths): PartnerStore {
    const partnersDoc = readDocument(paths.partners);
    const keysDoc = readDocument(paths.keys);
    const partners = checked(partnersDoc, PartnersState).consumers ?? [];
    const keyed = checked(keysDoc, KeysState).consumers ?? [];
    const where = (file: string, message: string) => new Failure(`${file}: ${message}`);

    for (const [field, values] of [
      ['username', partners.map((c) => c.username)],
      ['id', partners.map((c) => c.id)],
      ['custom_id', partners.flatMap((c) => (c.custom_id ? [c.custom_id] : []))],
    ] as const) {
      const dup = duplicate(values);
      if (dup) throw where(paths.partners, `two consumers have ${field} ${dup} (Kong requires it unique)`);
    }
    for (const c of partners) {
      const dup = duplicate(c.acls.map((a) => a.group));
      if (dup) throw where(paths.partners, `consumer ${c.username} has group ${dup} twice`);
    }
    const dupKeyed = duplicate(keyed.map((c) => c.username));
    if (dupKeyed) throw where(paths.keys, `consumer ${dupKeyed} is listed twice`);

    const list: Partner[] = partners.map((c) => {
      const k = keyed.find((x) => x.username === c.username);
      if (!k)
        throw where(
          paths.keys,
          `consumer ${c.username} of ${paths.partners} is missing (every partner must be in both files, or a sync of this file would delete it)`,
        );
      if (k.id !== c.id || k.custom_id !== c.custom_id) {
        throw where(paths.keys, `consumer ${c.username} has a different id or custom_id than in ${paths.partners}`);
      }
      const credentials = (k.keyauth_credentials ?? []).map((cred) => {
        const variable = parseEnvReference(cred.key) as string;
        const expected = keyVariable(c.username, cred.id);
        if (variable !== expected)
          throw where(paths.keys, `credential ${cred.id} of ${c.username} must read ${expected}, not ${variable}`);
        return { id: cred.id, variable };
      });
      return {
        name: c.username,
        id: c.id,
        ...(c.custom_id !== undefined ? { customId: c.custom_id } : {}),
        groups: c.acls.map((a) => a.group),
        credentials,
      };
    });
    const orphan = keyed.find((k) => !partners.some((c) => c.username === k.username));
    if (orphan) throw where(paths.keys, `consumer ${orphan.username} is not in ${paths.partners}`);
    const dupCred = duplicate(list.flatMap((p) => p.credentials.map((c) => c.id)));
    if (dupCred) throw where(paths.keys, `credential id ${dupCred} is used twice`);
    const dupConsumerCred = duplicate([
      ...list.map((p) => p.id),
      ...list.flatMap((p) => p.credentials.map((c) => c.id)),
    ]);
    if (dupConsumerCred) throw where(paths.keys, `id ${dupConsumerCred} is used by a consumer and a credential`);

    return new PartnerStore(partnersDoc, keysDoc, list);
  }

  get paths(): StorePaths {
    return { partners: this.partnersDoc.path, keys: this.keysDoc.path };
  }

  partners(): Partner[] {
    return this.list.map((p) => ({ ...p, groups: [...p.groups], credentials: [...p.credentials] }));
  }

  find(name: string): Partner | undefined {
    return this.partners().find((p) => p.name === name);
  }

  /** The partner, or a Failure that names it and the partners there are. */
  get(name: string): Partner {
    const p = this.find(name);
    if (p) return p;
    const known = this.list.map((x) => x.name);
    throw new Failure(
      `unknown partner "${name}" (${known.length > 0 ? `partners: ${known.join(', ')}` : `${this.partnersDoc.path} has no partners yet`})`,
    );
  }

  addPartner(p: { name: string; id: string; customId?: string; groups: string[] }, credential: Credential): void {
    const identity = {
      username: p.name,
      id: p.id,
      ...(p.customId !== undefined ? { custom_id: p.customId } : {}),
      tags: [...CONSUMER_TAGS],
    };
    const doc = this.partnersDoc.doc;
    const entry = doc.createNode({ ...identity, acls: p.groups.map((group) => ({ group })) }) as YAMLMap;
    (entry.get('tags') as YAMLSeq).flow = true;
    consumersSeq(doc).add(entry);

    const keysEntry = this.keysDoc.doc.createNode({ ...identity, keyauth_credentials: [] }) as YAMLMap;
    (keysEntry.get('tags') as YAMLSeq).flow = true;
    consumersSeq(this.keysDoc.doc).add(keysEntry);
    this.list.push({ ...p, credentials: [] });
    this.addCredential(p.name, credential);
  }

  /** Sets the partner's groups: removed ones are deleted, missing ones appended; the rest stay as they are. */
  setGroups(name: string, groups: string[]): void {
    const partner = this.list.find((p) => p.name === name);
    if (!partner) throw new Failure(`internal: unknown partner ${name}`);
    const acls = listIn(consumerNode(this.partnersDoc.doc, name), 'acls');
    acls.items = acls.items.filter((item) => isMap(item) && groups.includes(String(item.get('group'))));
    const ordered = [...KNOWN_GROUPS].filter((g) => groups.includes(g));
    for (const group of ordered) {
      if (!partner.groups.includes(group)) acls.add(this.partnersDoc.doc.createNode({ group }));
    }
    partner.groups = [
      ...partner.groups.filter((g) => groups.includes(g)),
      ...ordered.filter((g) => !partner.groups.includes(g)),
    ];
  }

  addCredential(name: string, credential: Credential): void {
    const partner = this.list.find((p) => p.name === name);
    if (!partner) throw new Failure(`internal: unknown partner ${name}`);
    const key = new Scalar(envReference(credential.variable));
    key.type = Scalar.QUOTE_SINGLE;
    const creds = listIn(consumerNode(this.keysDoc.doc, name), 'keyauth_credentials');
    creds.add(this.keysDoc.doc.createNode({ id: credential.id, key }));
    partner.credentials.push(credential);
  }

  removeCredential(name: string, credentialId: string): void {
    const partner = this.list.find((p) => p.name === name);
    if (!partner) throw new Failure(`internal: unknown partner ${name}`);
    const creds = listIn(consumerNode(this.keysDoc.doc, name), 'keyauth_credentials');
    creds.items = creds.items.filter((item) => !(isMap(item) && item.get('id') === credentialId));
    partner.credentials = partner.credentials.filter((c) => c.id !== credentialId);
  }

  /** Writes the files whose text changed; returns their paths. */
  save(): string[] {
    return writeDocuments([this.partnersDoc, this.keysDoc]);
  }
}
