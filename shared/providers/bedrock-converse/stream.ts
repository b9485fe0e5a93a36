import { UpstreamError, streamEndedEarly, type PartialReply } from '../errors.js';
import type { ModelReply } from '../types.js';
import { fromConverseResponse, toUsage, type ConverseAnswer } from './response.js';
import { notJson, parseVendorJson } from '../vendor-json.js';

/** One event of a ConverseStream answer as the SDK yields it (one member set). */
interface StreamEvent {
  contentBlockStart?: { start?: { toolUse?: { name?: unknown } | null } | null } | null;
  contentBlockDelta?: { delta?: { text?: unknown; toolUse?: { input?: unknown } | null; reasoningContent?: unknown } | null } | null;
  messageStop?: { stopReason?: unknown } | null;
  metadata?: { usage?: ConverseAnswer['usage'] } | null;
}

/**
 * Reads a ConverseStream answer: `contentBlockDelta` text becomes deltas (reasoningContent
 * never does); with a forced tool, the tool's input JSON streams as the deltas instead;
 * `messageStop` gives the stop reason (a stream without it ended early: a failed call),
 * `metadata` the usage (cache reads and writes included). An exception frame (throttlingException, modelStreamErrorException, …) never
 * reaches the reader: the SDK throws it as the service exception, mapped by fromSdkError.
 * `finish` assembles the Converse answer for fromConverseResponse, so usage is priced by the same code.
 */
export class ConverseStreamReader {
  private text = '';
  private toolName: unknown;
  private toolInput = '';
  private started = false;
  private stopReason: unknown;
  private messageStopped = false;
  private usage: ConverseAnswer['usage'];

  constructor(
    private readonly forcedTool: boolean,
    private readonly onDelta: (text: string) => void,
  ) {}

  onEvent(event: StreamEvent): void {
    this.started = true;
    if (event.metadata?.usage) this.usage = event.metadata.usage;
    // After messageStop only its usage: the first stop reason stands, and no text comes after it.
    if (this.messageStopped) return;
    const start = event.contentBlockStart?.start?.toolUse;
    if (start) this.toolName = start.name;
    const delta = event.contentBlockDelta?.delta;
    if (typeof delta?.text === 'string') {
      this.text += delta.text;
      if (!this.forcedTool) this.onDelta(delta.text);
    } else if (typeof delta?.toolUse?.input === 'string') {
      this.toolInput += delta.toolUse.input;
      if (this.forcedTool) this.onDelta(delta.toolUse.input);
    }
    if (event.messageStop) {
      this.messageStopped = true;
      this.stopReason = event.messageStop.stopReason;
    }
  }

  /**
   * Whether the answer is whole: its stop reason and its usage (`metadata`, Bedrock's last
   * event) are in. A vendor that holds the connection open after them is not waited for.
   */
  ended(): boolean {
    return this.messageStopped && this.usage !== undefined;
  }

  /** `messageStop` came: its `metadata` may follow (send-stream.ts waits COUNT_WAIT_MS for it at most). */
  stopped(): boolean {
    return this.messageStopped;
  }

  private get output(): string {
    return this.forcedTool ? this.toolInput : this.text;
  }

  partial(): PartialReply {
    const usage = toUsage(this.usage);
    return usage ? { output: this.output, usage } : { output: this.output };
  }

  /** The reply; with a forced tool its output is the tool input as the model streamed it (the same JSON value `send` gives). */
  finish(): ModelReply {
    if (!this.started) throw new UpstreamError('upstream_malformed_response', 'The provider streamed no answer', { upstreamStatus: 200 });
    if (!this.messageStopped) throw streamEndedEarly('messageStop event');
    const content: unknown[] = [];
    if (this.text !== '') content.push({ text: this.text });
    // Cut at maxTokens, the tool input is a cut JSON text: the output as streamed (a cut output, checked as not JSON), not a malformed answer.
    const cut = this.stopReason === 'max_tokens';
    if (this.toolName !== undefined) content.push({ toolUse: { name: this.toolName, input: cut ? {} : toolInput(this.toolInput) } });
    const reply = fromConverseResponse({ output: { message: { role: 'assistant', content } }, stopReason: this.stopReason, usage: this.usage }, this.forcedTool);
    return this.forcedTool && this.toolName !== undefined ? { ...reply, output: this.toolInput } : reply;
  }
}

function toolInput(json: string): unknown {
  try {
    return parseVendorJson(json === '' ? '{}' : json);
  } catch (error) {
    throw new UpstreamError('upstream_malformed_response', `The provider streamed tool input that ${notJson(error)}`, { upstreamStatus: 200 });
  }
}
