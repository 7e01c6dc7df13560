// @ts-check
import effectPlugin from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["dist/**", "packages/*/dist/**", "packages/effect4/**", "node_modules/**", "coverage/**", "bench/RESULTS.md", ".tmp/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    plugins: { "@effect": effectPlugin },
    rules: {
      "@effect/no-import-from-barrel-package": ["error", { packageNames: ["effect", "@effect/platform", "@effect/platform-node"] }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": "error",
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }]
    }
  },
  {
    // The protocol core is framework-free (its tests too) and its sources are runtime-neutral.
    files: ["packages/core/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "effect", message: "packages/core is Effect-free: the editions are shells over it." }],
        patterns: [
          { group: ["effect/*", "@effect/*"], message: "packages/core is Effect-free: the editions are shells over it." }
        ]
      }]
    }
  },
  {
    files: ["packages/core/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "effect", message: "packages/core is Effect-free: the editions are shells over it." }],
        patterns: [
          { group: ["effect/*", "@effect/*"], message: "packages/core is Effect-free: the editions are shells over it." },
          { group: ["node:*"], message: "packages/core's sources are runtime-neutral: no Node modules." }
        ]
      }]
    }
  },
  {
    // The editions' shared glue is Effect-free and runtime-neutral too, and reaches the core only
    // through its package name (its public entry point).
    files: ["packages/shell/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "effect", message: "packages/shell is Effect-free: the editions bind it." }],
        patterns: [
          { group: ["effect/*", "@effect/*"], message: "packages/shell is Effect-free: the editions bind it." },
          { group: ["**/core/src", "**/core/src/**", "effect-agent-session-core/*"], message: "packages/shell imports the core through effect-agent-session-core only." }
        ]
      }]
    }
  },
  {
    files: ["packages/shell/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "effect", message: "packages/shell is Effect-free: the editions bind it." }],
        patterns: [
          { group: ["effect/*", "@effect/*"], message: "packages/shell is Effect-free: the editions bind it." },
          { group: ["**/core/src", "**/core/src/**", "effect-agent-session-core/*"], message: "packages/shell imports the core through effect-agent-session-core only." },
          { group: ["node:*"], message: "packages/shell's sources are runtime-neutral: no Node modules." }
        ]
      }]
    }
  },
  {
    files: ["packages/cli/src/**/*.ts", "packages/cli/test/**/*.ts", "packages/test-support/**/*.ts", "examples/**/*.ts", "packages/effect3/test/**/*.ts", "bench/**/*.ts", "test/**/*.ts"],
    rules: { "no-console": "off" }
  }
)
