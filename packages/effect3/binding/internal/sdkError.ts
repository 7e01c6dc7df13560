/**
 * The base of every error class of the SDK: each edition's `Errors` builds its classes on it,
 * those written once for both editions (`binding/Errors.ts`) and those of one edition alike.
 */
import type * as Cause from "effect/Cause"
import * as Schema from "effect/Schema"
import { Failures } from "effect-agent-session-core"
import { fieldsOf, type FieldsOf, plain } from "../../src/internal/errorFields.js"
import type { TaggedErrorClass } from "../../src/internal/line.js"
import type { TypeId } from "../Errors.js"

/** An error whose `message` is derived from its fields: a getter. */
interface DerivedMessage extends Cause.YieldableError {
  readonly message: string
}

/** The class an error class of the SDK extends (see {@link SdkError}). */
export type SdkErrorClass<Self, Tag extends Failures.ErrorTag> = TaggedErrorClass<
  Self,
  Tag,
  FieldsOf<(typeof Failures.errorFields)[Tag]>,
  Tag extends keyof typeof Failures.messages ? DerivedMessage : Cause.YieldableError,
  { readonly [TypeId]: TypeId }
>

/**
 * The base of an error class of the SDK, its instances marked with `typeId` (`Errors.TypeId`): the
 * `Schema.TaggedError` of the fields of its tag in the core's table (`Failures.errorFields`),
 * identified as `effect-agent-session/<tag>`, and with the `message` the core derives from its
 * fields (`Failures.messages`) unless it has a `message` field.
 */
export const SdkError = (typeId: TypeId) => <Self>() => <Tag extends Failures.ErrorTag>(tag: Tag): SdkErrorClass<Self, Tag> => {
  const fields = fieldsOf<Failures.Fields>(Failures.errorFields[tag])
  class Base extends Schema.TaggedError<unknown>(`effect-agent-session/${tag}`)(tag as string, fields) {
    readonly [typeId]: TypeId = typeId
  }
  const message = Failures.messageOf(tag, plain)
  if (message !== undefined) {
    Object.defineProperty(Base.prototype, "message", { configurable: true, get: function(this: Base) { return message(this) } })
  }
  return Base as unknown as SdkErrorClass<Self, Tag>
}
