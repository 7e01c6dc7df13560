/**
 * The `Schema` names of Effect 4 that the cluster's binding (`../binding/`, copied from the Effect 3
 * cluster edition's `binding/`: code written once for both cluster editions) uses where Effect 3
 * spells the same thing differently; that edition's `internal/lineSchema.ts` exports the same
 * names, bound to Effect 3. Kept apart from `line.ts`: it loads no cluster module, so that
 * `ClusterErrors` can be imported on its own.
 */
import type * as Arr from "effect/Array"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"

/** Every error of the SDK (the edition's `Errors.AgentSessionError`). */
export type { AgentSessionError } from "../../../src/Errors.js"

/** The schema of one of the given literal values. */
export const literals = <const Literals extends Arr.NonEmptyReadonlyArray<SchemaAST.LiteralValue>>(
  values: Literals
): Schema.Literals<Literals> => Schema.Literals(values)

/** The schema of a value of any of the given schemas (the first that decodes it). */
export const union = <const Members extends ReadonlyArray<Schema.Top>>(members: Members): Schema.Union<Members> =>
  Schema.Union(members)

/** An integer at least `minimum`. */
export const intAtLeast = (minimum: number): Schema.Int => Schema.Int.check(Schema.isGreaterThanOrEqualTo(minimum))

/** The schema of a value's JSON text. */
export const parseJson = <S extends Schema.Top>(schema: S): Schema.fromJsonString<S> => Schema.fromJsonString(schema)
