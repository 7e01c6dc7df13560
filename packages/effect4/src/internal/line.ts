/**
 * The names of Effect 4 that the binding (the repository's `binding/`, Effect code written once
 * for both editions) uses where Effect 3 names the same thing differently. The Effect 3 edition's
 * `line.ts` exports the same names, bound to Effect 3: a binding module imports them from here
 * (`../src/internal/line.js`, relative to where its copy lies), never from the line's own module.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"

/** What a duration may be given as (`"5 seconds"`, millis, a `Duration`). */
export type DurationInput = Duration.Input

/** The `Duration` of an input (a malformed one is a defect: inputs are typed). */
export const durationOf: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/**
 * Declares a service's tag as a class: `class X extends ServiceTag<X, Service>()("key") {}`. The
 * class is the key a layer provides the service under and an effect reads it by.
 */
export const ServiceTag: <Self, Shape>() => <const Key extends string>(key: Key) => Context.ServiceClass<Self, Key, Shape> =
  Context.Service

/** The effect that reads a service from the context by its tag. */
export const service: <Id, Shape>(tag: Context.Key<Id, Shape>) => Effect.Effect<Shape, never, Id> = Effect.service

/** A secret read from the configuration (an environment variable by default), as `Redacted`. */
export const configRedacted: (name: string) => Config.Config<Redacted.Redacted<string>> = Config.Redacted

/** A string read from the configuration (an environment variable by default). */
export const configString: (name: string) => Config.Config<string> = Config.String

/** The failure of reading the configuration. */
export type ConfigError = Config.ConfigError
