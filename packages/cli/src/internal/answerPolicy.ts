/**
 * How `run` answers the agent's requests (`Run.decide`): the flags first, then a prompt on a
 * terminal, else deny.
 */
import * as Prompt from "@effect/cli/Prompt"
import type * as Terminal from "@effect/platform/Terminal"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Answer from "effect-agent-session/Answer"
import * as SessionEvent from "effect-agent-session/SessionEvent"
import type { AnswerSource } from "./renderTypes.js"
import type { AnswerPolicy } from "./runTypes.js"
import * as Sanitize from "../Sanitize.js"

/** `Run.decide`: the answer to a request, and how it was decided. */
export const decide = (
  policy: AnswerPolicy,
  request: SessionEvent.ExternalResourceRequested
): Effect.Effect<
  { readonly answer: Answer.Answer; readonly source: AnswerSource },
  Terminal.QuitException,
  Prompt.Prompt.Environment
> => {
  const flag = (answer: Answer.Answer) => Effect.succeed({ answer, source: "flag" as const })
  if (policy.deny) return flag(Answer.deny())
  const kind = SessionEvent.resourceTypeRaw(request.resource_type)
  if (kind === "request_user_input") {
    if (Option.isSome(policy.input)) return flag(Answer.grant(policy.input.value))
    if (policy.approve) return flag(Answer.grant())
    if (policy.interactive) {
      // The prompt writes to the terminal itself: the service's text in it is made safe first.
      const field = Sanitize.line(Option.getOrElse(request.field_name, () => "input"))
      return Effect.map(
        Prompt.run(Prompt.text({ message: `${field} (empty to deny)` })),
        (text) => ({ answer: text.length === 0 ? Answer.deny() : Answer.grant(text), source: "prompt" as const })
      )
    }
    return Effect.succeed({ answer: Answer.deny(), source: "no-terminal" as const })
  }
  if (policy.approve) return flag(Option.isSome(policy.input) ? Answer.grant(policy.input.value) : Answer.grant())
  if (policy.interactive) {
    return Effect.map(
      Prompt.run(
        Prompt.confirm({
          message: `Allow ${kind === "admin_permission_request" ? "this" : Sanitize.line(kind)} request?`,
          initial: false
        })
      ),
      (yes) => ({ answer: yes ? Answer.grant() : Answer.deny(), source: "prompt" as const })
    )
  }
  return Effect.succeed({ answer: Answer.deny(), source: "no-terminal" as const })
}
