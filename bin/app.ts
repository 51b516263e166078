/** `npx cdk synth|deploy AnimalStore-staging|AnimalStore-production`: see docs/deployment.md. */
import { createApp } from '../lib/stacks/app.ts';

createApp();
