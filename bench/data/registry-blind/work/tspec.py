WEB = ["brave-search","exa","kagi","tavily","perplexity","linkup","search1api","cloudsway-smartsearch","bing-search","google-custom-search","serper","searxng","duckduckgo","brightdata","firecrawl"]
PAGE = ["fetch","firecrawl","exa","duckduckgo","tavily","brightdata","search1api"]
BROWSER = ["puppeteer","playwright","browserbase"]
FILES = ["filesystem","desktop-commander"]
PG = ["postgres","neon","supabase","prisma","dbhub"]
MAPS_GEO = ["google-maps","mapbox","tomtom","openstreetmap"]
SLACK = ["slack","slack-korotovsky"]
JIRA_W = ["mcp-atlassian","atlassian","jira"]
CONF_W = ["mcp-atlassian","atlassian"]
LINEAR = ["linear","linear-jerhadf"]
GITLAB = ["gitlab","gitlab-archived"]
MONGO = ["mongodb","mongodb-lens"]
CAL = ["google-calendar","gsuite"]
ONCALL = ["grafana","pagerduty"]
Q = [
# fetch
("task", "grab the article at this url and give it to me as clean markdown", PAGE),
("vague", "can you read this link for me and tell me what it says", PAGE + BROWSER),
# filesystem
("task", "rename report_final.docx to report_v2.docx and move it into the archive folder", FILES),
("task", "show me the folder structure of my project directory as a tree", FILES),
("task", "find every .env file under my home directory", FILES),
("task", "read these three config files side by side", FILES),
("task", "which files in ~/Downloads are the biggest", FILES),
("task", "replace the port number in config.yaml without rewriting the whole file", FILES),
# git
("task", "what did I change in my working copy that isn't staged yet", ["git"]),
("task", "show me the commits from the last two weeks in this local repo", ["git"]),
("task", "stage the readme and commit it with the message 'docs: fix typo'", ["git"]),
("task", "switch my local checkout to the release-1.4 branch", ["git"]),
("typo", "unstage evrything i just git added", ["git"]),
# memory
("task", "remember that my sister ana lives in porto and is allergic to peanuts", ["memory","qdrant","neo4j"]),
("task", "what do you remember about my project deadlines from earlier chats", ["memory","qdrant","neo4j"]),
("task", "forget what you stored about my old job", ["memory","neo4j"]),
# sequential-thinking
("vague", "work through this planning problem step by step, revising as you go", ["sequential-thinking"]),
# time
("task", "what time is it right now in tokyo", ["time"]),
("task", "if it's 3pm in new york what time is that in berlin", ["time"]),
# aws-kb-retrieval
("vendor", "retrieve passages from our bedrock knowledge base about the refund policy", ["aws-kb-retrieval"]),
# brave-search
("task", "find pizza places that are open near union square", ["brave-search","google-maps","mapbox","tomtom","openstreetmap","tripadvisor"]),
("vendor", "brave search for the latest rust release notes", ["brave-search"]),
# everart
("task", "generate an illustration of a fox reading a book in watercolor style", ["everart","replicate"]),
# google-drive
("vendor", "find the Q3 budget spreadsheet somewhere in my google drive", ["google-drive"]),
# google-maps
("task", "turn this street address into latitude and longitude", MAPS_GEO),
("task", "what address is at 48.8584, 2.2945", MAPS_GEO),
("task", "how long does it take to drive from lyon to geneva", MAPS_GEO),
("task", "what's the elevation of the trailhead at these coordinates", ["google-maps"]),
("task", "compare travel times from my three candidate offices to the airport", ["google-maps","mapbox","tomtom"]),
# postgres
("task", "run a select on our postgres database to count orders per month", PG),
("typo", "query the postgress db for users who signed up yesterday", PG),
# puppeteer
("task", "open the signup page in a browser and fill in the email field", BROWSER),
("task", "take a screenshot of our landing page", BROWSER + ["chrome-devtools"]),
("task", "run some javascript on this page in the browser and return document.title", BROWSER + ["chrome-devtools"]),
("task", "hover over the menu and pick 'Germany' from the country dropdown", BROWSER),
# sentry
("vendor", "pull up sentry issue PROJ-1234 and explain the stack trace", ["sentry"]),
# slack
("vendor", "post 'deploy done' in the #releases slack channel", SLACK),
("task", "add a thumbs up reaction to the last message in #general", SLACK),
("task", "read the replies in that slack thread about the outage", SLACK),
("task", "get the profile and title of the slack user @maria", SLACK),
("task", "list the channels in our slack workspace", SLACK),
# sqlite
("task", "create a table called expenses in my local sqlite file", ["sqlite"]),
("task", "what tables are in this .db file and what are their columns", ["sqlite","duckdb"]),
# gitlab-archived
("vendor", "open a merge request on gitlab from feature/login into main", GITLAB),
("task", "fork that gitlab project into my namespace", GITLAB),
("vendor", "push these three files to my gitlab repo in one commit", GITLAB),
# github
("task", "list the open dependabot alerts on our repo", ["github"]),
("task", "trigger the deploy workflow in github actions", ["github"]),
("task", "show me the logs of the failing job in the last github actions run", ["github"]),
("vendor", "make a secret github gist with this snippet", ["github"]),
("task", "star the repo tokio-rs/tokio for me", ["github"]),
("task", "search all our github repos for code calling deprecated_api(", ["github"]),
("vendor", "merge github pull request 42 with squash", ["github"]),
("task", "ask copilot to review my pull request", ["github"]),
("task", "any leaked secrets flagged by secret scanning in my repo?", ["github"]),
("typo", "mark all my githib notifications as read", ["github"]),
("task", "what's the latest release tag of the fastapi repo", ["github"]),
("task", "comment on issue 17 that the fix is in the next release", ["github","gitlab","gitea"]),
# clickhouse
("vendor", "run a query on our clickhouse cluster for yesterday's top events", ["clickhouse","grafana"]),
("task", "query this parquet file with chdb without a server", ["clickhouse"]),
# bigquery
("vendor", "describe the schema of the events table in bigquery", ["bigquery"]),
("task", "run this sql in bigquery dialect against our analytics dataset", ["bigquery"]),
# snowflake
("vendor", "list the schemas in our snowflake warehouse", ["snowflake","grafana"]),
("task", "save this insight about churn to the snowflake memo", ["snowflake"]),
# duckdb
("task", "run sql over this local csv using duckdb", ["duckdb","motherduck"]),
# airtable
("vendor", "add a new record to the Leads table in my airtable base", ["airtable"]),
("task", "add a 'priority' field to the tasks table in airtable", ["airtable"]),
("task", "search my airtable records for anything mentioning 'acme'", ["airtable"]),
("task", "leave a comment on that airtable record", ["airtable"]),
# exa
("vendor", "exa search for recent papers on retrieval augmented generation", ["exa"]),
("task", "research and build me a list of 20 climate tech startups with their funding", ["exa","firecrawl","perplexity"]),
# firecrawl
("task", "list every url on docs.example.com", ["firecrawl","search1api"]),
("task", "crawl the whole help center and bring back all pages", ["firecrawl","apify","search1api"]),
("vendor", "firecrawl scrape this product page with the prices", ["firecrawl"]),
("task", "parse this local pdf into text", ["firecrawl"]),
# mongodb-lens
("task", "create an index on the email field of the users collection in mongo", MONGO),
("task", "explain why this mongodb find query is slow", MONGO),
("task", "convert this SQL select into a mongodb aggregation", ["mongodb-lens"]),
("task", "find stores within 2km of this point in my mongodb collection", MONGO),
("task", "export the orders collection to json", MONGO),
("task", "analyze the schema of the events collection", MONGO),
("typo", "count documents in the mongo colection 'sessions'", MONGO),
# asana
("vendor", "create an asana task to update the onboarding doc due friday", ["asana"]),
("task", "make task B depend on task A in asana", ["asana"]),
("task", "post a project status update in asana saying we're on track", ["asana"]),
("task", "show me all my assigned tasks in asana", ["asana"]),
("task", "add a subtask 'write tests' under the login task in asana", ["asana"]),
# supabase
("vendor", "deploy this edge function to my supabase project", ["supabase"]),
("task", "generate typescript types from my supabase database schema", ["supabase"]),
("task", "pause my supabase dev project to save money", ["supabase"]),
("task", "apply this migration to my supabase database", ["supabase"]),
# neon
("task", "create a branch of my serverless postgres database to test a migration", ["neon","supabase"]),
("vendor", "show the slowest queries on my neon database", ["neon"]),
("task", "get the connection string for my neon project", ["neon"]),
("task", "compare the schema of my dev branch with main in neon", ["neon"]),
# playwright
("task", "record a video of the browser while it goes through checkout", ["playwright"]),
("task", "save this web page as a pdf", ["playwright"]),
("task", "set a session cookie in the browser before loading the dashboard", ["playwright"]),
("task", "show me the network requests the page made", ["playwright","chrome-devtools"]),
("task", "upload a file through the form on this page", ["playwright"]),
("vendor", "use playwright to check that the 'Order placed' text is visible", ["playwright"]),
# grafana
("task", "who is on call right now", ONCALL),
("vendor", "search our grafana dashboards for anything about latency", ["grafana"]),
("task", "silence the disk space alert for two hours", ["grafana"]),
("task", "query loki for error logs from the payments service in the last hour", ["grafana"]),
("task", "run a promql query for the request rate of the api", ["grafana","prometheus"]),
("task", "add an annotation on the dashboard marking today's deploy", ["grafana"]),
("task", "open an incident for the checkout outage and add a timeline note", ["grafana","pagerduty","rootly"]),
("task", "render the cpu panel from the overview dashboard as an image", ["grafana"]),
("task", "query cloudwatch metrics for our lambda errors", ["grafana","aws"]),
# slack-korotovsky
("task", "what unread slack messages do I have across all channels", ["slack-korotovsky"]),
("task", "search slack for messages mentioning the Q4 launch", ["slack-korotovsky"]),
("task", "create a slack user group called @oncall-web", ["slack-korotovsky"]),
("task", "mark the #random channel as read", ["slack-korotovsky"]),
# whatsapp
("task", "send a voice note to my brother on whatsapp", ["whatsapp"]),
("vendor", "what was the last whatsapp message from mom", ["whatsapp"]),
("task", "send this pdf to the family whatsapp group", ["whatsapp"]),
("task", "download the photo someone sent in my whatsapp chat with joão", ["whatsapp"]),
# discord
("vendor", "read the latest messages in our discord #support channel", ["discord"]),
("task", "post the patch notes in the discord announcements channel", ["discord"]),
# google-calendar
("task", "find a free hour on my google calendar next tuesday", CAL),
("task", "move my 3pm dentist appointment to 4pm on google calendar", CAL),
("task", "cancel friday's standup in my google calendar", CAL),
("typo", "whats on my calender tomorow (google)", CAL),
# gmail
("task", "create a gmail filter that archives newsletters from substack", ["gmail"]),
("vendor", "draft an email in gmail to the landlord but don't send it", ["gmail","gsuite"]),
("task", "search my gmail for the flight confirmation from iberia", ["gmail","gsuite","imap"]),
("task", "label all unread emails from my boss as 'urgent' in gmail", ["gmail"]),
("task", "delete all the promotional emails from last month in gmail", ["gmail"]),
("task", "send an email from my gmail with the invoice attached", ["gmail","gsuite","email-smtp"]),
# airbnb
("vendor", "find an airbnb in lisbon for 4 people in june under 150 a night", ["airbnb"]),
("task", "show me the house rules and amenities of that airbnb listing", ["airbnb"]),
# mcp-atlassian
("task", "move jira ticket PAY-321 to In Review", JIRA_W),
("task", "search jira with jql for bugs assigned to me", JIRA_W),
("vendor", "create a confluence page with the meeting notes", CONF_W),
("task", "comment on the confluence page about the release plan", CONF_W),
("task", "search confluence for the onboarding guide", CONF_W + ["confluence"]),
# kubernetes
("task", "scale the web deployment to 5 replicas", ["kubernetes"]),
("task", "drain node worker-3 for maintenance", ["kubernetes"]),
("task", "show the logs of the crashing pod in the payments namespace", ["kubernetes"]),
("task", "port-forward the grafana service to localhost 3000", ["kubernetes"]),
("task", "roll back the api deployment to the previous revision", ["kubernetes"]),
("task", "delete all the evicted pods", ["kubernetes"]),
("typo", "aply this yaml manifest to the kubernets cluster", ["kubernetes"]),
# linear-jerhadf
("vendor", "what linear issues are assigned to me", LINEAR),
("task", "create a linear issue for the broken password reset", LINEAR),
("task", "add a comment to linear issue ENG-88 with the repro steps", LINEAR),
# duckduckgo
("vendor", "search duckduckgo for privacy-friendly analytics tools", ["duckduckgo"]),
("vendor", "use puppeteer to click the login button and wait for the dashboard", ["puppeteer"]),
("vendor", "kubectl describe the ingress in the staging namespace", ["kubernetes"]),
("vendor", "insert a row into the sqlite expenses table", ["sqlite"]),
("vendor", "git diff between main and my feature branch in this repo", ["git"]),
]
