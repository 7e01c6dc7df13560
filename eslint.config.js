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
    files: ["packages/cli/src/**/*.ts", "examples/**/*.ts", "bench/**/*.ts", "test/**/*.ts"],
    rules: { "no-console": "off" }
  }
)
