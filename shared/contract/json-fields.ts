import { escapedQuoteAt } from '../text/escaped-quote.js';
import { escapePointer } from './pointer.js';
import { setKey } from '../text/set-key.js';

/**
 * Fields and array elements a body may hold in all, at every level: far more than the
 * contract needs (200 history turns of 3 fields, 32 models, a response schema of 100
 * objects), far fewer than a 5 MiB body of empty keys (150,000 of them cost the schema
 * check alone over 100 ms).
 */
export const MAX_FIELDS = 5_000;

export const TOO_MANY_FIELDS = `has more than ${MAX_FIELDS} fields in all`;

/** What a member whose name its object already holds is answered with. */
export const REPEATED_MEMBER = 'appears more than once in its object';

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = '\\';
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Whether a JSON text holds more than `max` (MAX_FIELDS) object members and array elements in all,
 * read from the text before it is parsed: JSON.parse alone of a hostile 5 MiB body (2.6
 * million nested arrays, 400,000 keys) holds the thread for seconds, which the same cap
 * checked on the parsed value comes too late to spare. A vendor's text is read so
 * (shared/providers/vendor-json.ts): its member names are not compared, JSON.parse keeps the
 * last of a repeated one, as the vendors' own SDKs do.
 */
export function tooManyJsonFields(text: string, max: number = MAX_FIELDS): boolean {
  return scan(text, max);
}

/** A request body's text as read before it is parsed: too many fields, or its repeated members. */
export interface RequestJsonFields {
  /** More than MAX_FIELDS fields: the reading stopped there. */
  tooMany: boolean;
  /**
   * The JSON pointer of each member whose name its object already holds (names compared
   * decoded: `"\u006dodels"` is `models`), once per name and object, in the text's order.
   * JSON.parse keeps the last; a proxy or a log before the gateway may read the first.
   * Listed while the pointers total REPORTED_CHARS at most (the first whatever its length):
   * a pointer below a member name of megabytes is that long.
   */
  repeated: string[];
  /** How many members were repeated, once per name and object: `repeated`'s count, and those its characters left out. */
  repeatedCount: number;
}

/** Characters of the repeated members' pointers listed beyond the first. */
const REPORTED_CHARS = 64 * 1024;

/**
 * A request body's fields counted as tooManyJsonFields counts them, and its member names
 * compared in the same pass: linear in the text, its memory bounded by the field cap (an
 * object open, a name kept, per field) and the text (the names kept are slices of it).
 */
export function readRequestJson(text: string): RequestJsonFields {
  const fields: RequestJsonFields = { tooMany: false, repeated: [], repeatedCount: 0 };
  fields.tooMany = scan(text, MAX_FIELDS, fields);
  return fields;
}

/** An object or array open at the scan's place, while member names are compared. */
interface Open {
  parent: Open | undefined;
  object: boolean;
  /** The keys (setKey) of an object's members so far: a list while it is short (no hashing), then a Set. */
  names: string[] | Set<string>;
  /** The keys of its members already reported repeated. */
  reported: Set<string> | undefined;
  /** The member being read: an object's last name. */
  name: string;
  /** The element being read: an array's index. */
  index: number;
  /** Whether the next string is a member's name: after an object's `{` or `,`. */
  nameNext: boolean;
  /** Its JSON pointer, built the first time one of its members is reported. */
  pointer: string | undefined;
}

/** Members an object's names are compared in a list for: a few string comparisons cost less than hashing each name. */
const LISTED_NAMES = 8;

/** Adds a member's key to its object's; false when the object held it already. */
function addName(open: Open, key: string): boolean {
  const names = open.names;
  if (Array.isArray(names)) {
    if (names.includes(key)) return false;
    names.push(key);
    if (names.length > LISTED_NAMES) open.names = new Set(names);
    return true;
  }
  if (names.has(key)) return false;
  names.add(key);
  return true;
}

/** Whether a repeated member's key is reported for the first time in its object (then it is marked reported). */
function firstReport(open: Open, key: string): boolean {
  open.reported ??= new Set();
  if (open.reported.has(key)) return false;
  open.reported.add(key);
  return true;
}

/**
 * One pass: members and elements are the commas plus the containers that are not empty,
 * outside strings, and a string is skipped by searching for its closing quote (a quote after
 * an odd run of backslashes is escaped; each run is read once, by the quote after it). A text
 * that is not JSON counts whatever it counts: the parser refuses it anyway. With `found`,
 * each open container is kept too (no more than the fields counted: a container that is not
 * empty is one), and each member name read, decoded when it holds an escape, and compared
 * with its object's others.
 */
function scan(text: string, max: number, found?: Pick<RequestJsonFields, 'repeated' | 'repeatedCount'>): boolean {
  let fields = 0;
  let open: Open | undefined;
  let reportedChars = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      let end = i;
      do {
        end = text.indexOf('"', end + 1);
        if (end === -1) return false;
      } while (escapedQuoteAt(text, end));
      if (open?.nameNext) {
        open.nameNext = false;
        const name = memberName(text, i, end);
        open.name = name;
        const key = setKey(name);
        if (!addName(open, key)) {
          // Reported once by its pointer: names that differ only in half a surrogate pair read alike there (U+FFFD).
          const segment = escapePointer(name);
          if (firstReport(open, setKey(segment))) {
            found!.repeatedCount++;
            const pointer = `${pointerOf(open)}/${segment}`;
            if (found!.repeated.length === 0 || reportedChars + pointer.length <= REPORTED_CHARS) {
              found!.repeated.push(pointer);
              reportedChars += pointer.length;
            }
          }
        }
      }
      i = end;
    } else if (code === COMMA) {
      if (++fields > max) return true;
      if (open) {
        if (open.object) open.nameNext = true;
        else open.index++;
      }
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      let next = i + 1;
      while (next < length && isSpace(text.charCodeAt(next))) next++;
      const after = text.charCodeAt(next);
      if (after !== CLOSE_ARRAY && after !== CLOSE_OBJECT && ++fields > max) return true;
      if (found) {
        const object = code === OPEN_OBJECT;
        open = { parent: open, object, names: [], reported: undefined, name: '', index: 0, nameNext: object, pointer: open ? undefined : '' };
      }
    } else if ((code === CLOSE_ARRAY || code === CLOSE_OBJECT) && open) {
      open = open.parent;
    }
  }
  return false;
}

/** A member name as JSON.parse reads it: its escapes decoded (a name that is not valid JSON is the parser's to refuse). */
function memberName(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end);
  if (!raw.includes(BACKSLASH)) return raw;
  try {
    return JSON.parse(text.slice(start, end + 1)) as string;
  } catch {
    return raw;
  }
}

/** A container's JSON pointer, from its nearest ancestor's already built (the root's is ''); each built once. */
function pointerOf(open: Open): string {
  const unbuilt: Open[] = [];
  let at: Open = open;
  while (at.pointer === undefined) {
    unbuilt.push(at);
    at = at.parent!;
  }
  let pointer = at.pointer;
  for (let i = unbuilt.length - 1; i >= 0; i--) {
    const child = unbuilt[i]!;
    const parent = child.parent!;
    pointer = `${pointer}/${parent.object ? escapePointer(parent.name) : parent.index}`;
    child.pointer = pointer;
  }
  return pointer;
}
