/**
 * Flags whose values are checked where they are parsed: a value that is not a whole number, is
 * out of range, or is not one of the choices is a usage error (exit 2) whose message names the
 * flag, the rule and the value, with a suggestion for a choice that is close (`--dialect
 * observd`: `did you mean observed?`). Never an `internal error` from a value the program
 * cannot use (`simulate --port 99999`).
 *
 * @since 0.1.0
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { didYouMean } from "./Suggest.js"

/**
 * The bounds of an integer flag (inclusive).
 *
 * @since 0.1.0
 * @category models
 */
export interface Bounds {
  readonly min: number
  readonly max?: number | undefined
}

/** A value as the message shows it: a number as it is, anything else quoted. */
const shown = (text: string): string => /^[+-]?\d+(\.\d+)?$/.test(text) ? text : JSON.stringify(text)

/**
 * Reads the value of an integer flag: the number, or the message of a usage error naming the
 * flag (`--port must be a whole number from 0 to 65535, not 99999`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseInteger = (flag: string, text: string, bounds: Bounds): Either.Either<number, string> => {
  const rule = bounds.max === undefined
    ? `a whole number of at least ${bounds.min}`
    : `a whole number from ${bounds.min} to ${bounds.max}`
  const value = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(value) && value >= bounds.min && (bounds.max === undefined || value <= bounds.max)
    ? Either.right(value)
    : Either.left(`${flag} must be ${rule}, not ${shown(text.trim())}`)
}

/**
 * Reads the value of a choice flag: the choice, or the message of a usage error naming the flag
 * and the choices, with a suggestion when one is close.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseChoice = <const A extends string>(
  flag: string,
  text: string,
  choices: ReadonlyArray<A>
): Either.Either<A, string> => {
  const found = choices.find((choice) => choice === text)
  if (found !== undefined) return Either.right(found)
  const list = choices.length <= 2 ? choices.join(" or ") : `one of ${choices.join(", ")}`
  return Either.left(`${flag} must be ${list}, not ${JSON.stringify(text)}${didYouMean(text, choices)}`)
}

/**
 * Reads a URL: absolute, with one of the schemes; else the message of a usage error naming where
 * it came from (a flag or an environment variable).
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseUrl = (source: string, text: string, schemes: ReadonlyArray<string>): Either.Either<string, string> =>
  URL.canParse(text) && schemes.includes(new URL(text).protocol)
    ? Either.right(text)
    : Either.left(`${source} must be an absolute ${schemes.map((s) => `${s}//`).join(" or ")} URL, not ${JSON.stringify(text)}`)

/**
 * Reads a text that must not be empty (nor only spaces).
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseNonEmpty = (flag: string, text: string): Either.Either<string, string> =>
  text.trim().length > 0 ? Either.right(text) : Either.left(`${flag} must not be empty`)

const checked = <A>(parse: (text: string) => Either.Either<A, string>) => (text: string) =>
  Either.match(parse(text), {
    onLeft: (message) => Effect.fail(ValidationError.invalidValue(HelpDoc.p(message))),
    onRight: (value) => Effect.succeed(value)
  })

/**
 * An integer flag within bounds (see {@link parseInteger}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const integer = (name: string, bounds: Bounds): Options.Options<number> =>
  Options.text(name).pipe(Options.mapEffect(checked((text) => parseInteger(`--${name}`, text, bounds))))

/**
 * A flag whose value is one of the choices (see {@link parseChoice}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const choice = <const A extends string>(name: string, choices: ReadonlyArray<A>): Options.Options<A> =>
  Options.text(name).pipe(Options.mapEffect(checked((text) => parseChoice(`--${name}`, text, choices))))

/**
 * A flag whose value is an absolute URL with one of the schemes (see {@link parseUrl}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const url = (name: string, schemes: ReadonlyArray<string>): Options.Options<string> =>
  Options.text(name).pipe(Options.mapEffect(checked((text) => parseUrl(`--${name}`, text, schemes))))

/**
 * A text flag that must not be empty (see {@link parseNonEmpty}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const nonEmpty = (name: string): Options.Options<string> =>
  Options.text(name).pipe(Options.mapEffect(checked((text) => parseNonEmpty(`--${name}`, text))))
