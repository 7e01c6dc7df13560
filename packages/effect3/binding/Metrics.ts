/**
 * The SDK's metrics: the prefix of their names, and how their readings are printed.
 *
 * The declarations of the public module `Metrics` written once for both editions: each edition's
 * `src/Metrics.ts` is its entry point, re-exports them, and adds the metrics themselves and how
 * they are read from the line's registry (each line's `Metric` API is its own).
 *
 * @since 0.1.0
 */
import { Telemetry } from "effect-agent-session-shell"
import type { Reading } from "../src/Metrics.js"

/**
 * The prefix of every metric name of this SDK.
 *
 * @since 0.1.0
 * @category models
 */
export const prefix: typeof Telemetry.prefix = Telemetry.prefix

/**
 * The labels of a reading as `{k="v",...}` (empty when there are none).
 *
 * @since 0.1.0
 * @category accessors
 */
export const formatLabels: (labels: Readonly<Record<string, string>>) => string = Telemetry.formatLabels

/**
 * The readings as text lines, `name{labels} value` (histograms: count, sum, min, max), for a
 * terminal or a log.
 *
 * @since 0.1.0
 * @category accessors
 */
export const format: (readings: ReadonlyArray<Reading>) => ReadonlyArray<string> = Telemetry.format
