CREATE TABLE `aggregate_job_pages` (
	`job_id` text NOT NULL,
	`page` integer NOT NULL,
	`results` text NOT NULL,
	PRIMARY KEY(`job_id`, `page`)
);
--> statement-breakpoint
CREATE TABLE `aggregate_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`query` text NOT NULL,
	`state` text NOT NULL,
	`error_message` text,
	`pending` text NOT NULL,
	`pages` integer DEFAULT 0 NOT NULL,
	`result_bytes` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`submitted_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `aggregate_jobs_expires` ON `aggregate_jobs` (`expires_at`);--> statement-breakpoint
CREATE INDEX `aggregate_jobs_state` ON `aggregate_jobs` (`state`);