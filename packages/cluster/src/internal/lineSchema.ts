/**
 * The `Schema` names of Effect 3 that the cluster's binding (`binding/`, code written once for
 * both cluster editions) uses where Effect 4 spells the same thing differently; the Effect 4
 * cluster edition's `internal/lineSchema.ts` exports the same names, bound to Effect 4. Kept apart
 * from `line.ts`: it loads none of the cluster's packages, so that `ClusterErrors` can be imported
 * on its own.
 */
import type * as Arr from "effect/Array"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"

/** Every error of the SDK (the edition's `Errors.AgentSessionError`). */
export type { AgentSessionError } from "effect-agent-session/Errors"

/** The schema of one of the given literal values. */
export const literals = <const Literals extends Arr.NonEmptyReadonlyArray<AST.LiteralValue>>(
  values: Literals
): Schema.Literal<[...Literals]> => Schema.Literal(...values)

/** The schema of a value of any of the given schemas (the first that decodes it). */
export const union = <const Members extends AST.Members<Schema.Schema.All>>(members: Members): Schema.Union<Members> =>
  Schema.Union(...members)

/** An integer at least `minimum`. */
export const intAtLeast = (minimum: number): Schema.filter<typeof Schema.Int> =>
  Schema.Int.pipe(Schema.greaterThanOrEqualTo(minimum))

/** The schema of a value's JSON text. */
export const parseJson = <S extends Schema.Schema.Any>(schema: S): Schema.transform<Schema.SchemaClass<unknown, string>, S> =>
  Schema.parseJson(schema)
