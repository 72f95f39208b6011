"""General-purpose vocabulary of the services MCP servers front, organised by concept.

Written from general knowledge of what each *kind* of service does (mail, calendars, trackers,
code hosting, payments, monitoring, weather, ...), never from particular queries. Five tables:

* ``SYNONYM_GROUPS``: words that name the same thing; each reaches every other (symmetric).
* ``HINTS``: everyday cues that point at a broader concept ("umbrella" at the weather, "grep"
  at logs); one-way, and a hint reaches every synonym of its target.
* ``ABBREVIATIONS``: short forms read as their long form as well ("pr", "pto", "eta").
* ``PHRASES``: multi-word expressions whose meaning is not the sum of their words ("balance
  sheet" is accounting, not a spreadsheet; "reports to" is the org chart). A phrase is read as
  its gloss *instead of* its words, which is how an ambiguous word gets its sense from context.
* ``POLYSEMOUS_WORDS``: words with unrelated senses across services ("server", "sheet"); they
  count at a reduced weight so the rest of the query decides.
* ``CONTENT_MARKERS``: words after which a request names its topic ("about", "that", "for").
* ``WEAK_WORDS``: common words that seldom tell services apart ("new", "day", "left");
  they still count, at a fraction.

Words are written plainly; ``glove_mcp.discovery._synonyms`` stems them once at import.
"""

from __future__ import annotations

__all__ = [
    "ABBREVIATIONS",
    "CONTENT_MARKERS",
    "HINTS",
    "PHRASES",
    "POLYSEMOUS_WORDS",
    "SYNONYM_GROUPS",
    "THAT_CLAUSE_STARTS",
    "WEAK_WORDS",
]

SYNONYM_GROUPS: tuple[str, ...] = (
    # --- communication
    "email e-mail mail mailbox inbox",
    "reply respond answer",
    "forward cc bcc",
    "newsletter campaign mailing marketing blast",
    "message chat dm conversation ping messaging",
    "announce announcement broadcast",
    "sms text texting whatsapp telephony phone dial cellphone",
    "meeting meet call videocall conference webinar standup huddle invite invitation allhands "
    "one-on-one catchup",
    "calendar schedule agenda event appointment availability booking diary",
    "reschedule postpone",
    "recording record transcript transcription caption subtitle",
    # --- work tracking
    "issue ticket bug defect",
    "crash error exception failure fault stacktrace traceback",
    "task todo to-do chore reminder remind checklist errand",
    "project sprint milestone roadmap backlog epic cycle iteration",
    "board kanban card lane swimlane",
    "assign assignee owner",
    "deadline due",
    # --- code and delivery
    "code repo repository codebase source git monorepo",
    "branch commit merge diff rebase",
    "review reviewer approve approval",
    "ci pipeline build workflow",
    "deploy deployment release rollout redeploy rollback",
    "hosting host website site frontend webapp",
    "environment env config configuration setting",
    "secret credential",
    # --- documents and files
    "doc docs document documentation wiki knowledgebase kb handbook runbook playbook guide "
    "howto writeup note notebook memo",
    "file folder directory attachment upload download",
    "share sharing",
    "storage backup",
    "spreadsheet sheet excel csv workbook",
    "database db sql schema postgres postgresql psql mysql",
    "warehouse analytics bi bigquery redshift datalake",
    "query sql",
    # --- money
    "payment pay charge transaction refund payout chargeback",
    "invoice bill billing",
    "subscription recurring membership renewal",
    "accounting bookkeeping ledger accountant tax",
    "profit profitable profitability loss earnings margin",
    "expense receipt reimbursement reimburse spend mileage",
    "finance financial money revenue income",
    "shop store storefront ecommerce merchant retail",
    "product inventory stock restock sku merchandise",
    "order fulfilment fulfillment shipping shipment delivery parcel package",
    "crm lead deal opportunity prospect",
    "customer client",
    "support helpdesk servicedesk complaint complain",
    "satisfaction csat nps rating",
    # --- operations
    "monitor monitoring observability metric dashboard apm telemetry graph",
    "trace tracing span",
    "log logging",
    "incident outage downtime alert alerting oncall escalation pager",
    "acknowledge ack",
    "cloud infrastructure vm instance serverless compute",
    "dns domain subdomain nameserver",
    "cdn cache edge",
    "firewall waf",
    # --- people
    "hr personnel employee staff workforce payroll",
    "directory orgchart",
    "vacation holiday leave pto timeoff absence",
    "hire hiring recruit recruiting recruitment recruiter talent",
    "candidate applicant resume cv",
    "job vacancy",
    "interview scorecard",
    # --- legal
    "sign signature esignature esign signing countersign",
    "contract agreement nda lease",
    # --- web and information
    "web internet online",
    "search lookup",
    "news headline",
    "screenshot screengrab",
    "scrape scraping crawl crawler extract",
    "browser headless webpage",
    "form fill",
    "local disk filesystem laptop",
    "weather forecast",
    "pollution pollutant smog aqi particulate",
    "direction route navigate navigation commute",
    "map geocode address location coordinate",
    "place venue spot",
    "nearby nearest near close",
    "music song album artist playlist band radio audio track tune",
    "play playback listen",
    "video clip footage vlog",
    "research paper preprint publication study journal academic scholarly scientific science "
    "literature",
    "abstract summary",
    "encyclopedia encyclopaedia biography",
    "tweet twitter retweet timeline hashtag",
    "forum subreddit community discussion",
    "profile bio",
    # --- home, travel, design
    "light lamp bulb brightness dim",
    "thermostat heating heater hvac",
    "lock unlock door",
    "device appliance sensor plug",
    "smarthome iot",
    "flight fly flying airline airfare fare plane airport layover",
    "trip travel journey",
    "design mockup wireframe prototype ui ux",
    "icon logo asset graphic illustration",
)

HINTS: tuple[tuple[str, str], ...] = (
    # time of day and week: mostly a calendar matter
    (
        "today tomorrow tonight yesterday weekday weekend monday tuesday wednesday thursday "
        "friday saturday sunday morning afternoon evening noon o'clock double-booked busy free",
        "calendar schedule",
    ),
    # what the sky does and what people wear or carry for it
    (
        "rain raining rainy snow snowing snowy storm stormy thunder lightning hail sunny sun "
        "cloudy windy wind temperature umbrella raincoat jacket coat sweater scarf gloves "
        "sunscreen sunglasses humidity humid heatwave heat hot cold chilly freezing frost warm "
        "degrees celsius fahrenheit drizzle fog foggy hurricane tornado typhoon blizzard ice "
        "icy uv sunrise sunset outdoors",
        "weather forecast",
    ),
    (
        "smog haze smoke wildfire pollen allergy asthma breathe breathing ozone pm2 pm25 pm10 mask",
        "pollution air quality",
    ),
    (
        "jazz rock pop classical hiphop rap metal blues country techno lofi indie folk reggae "
        "soul edm chill podcast skip shuffle volume queue",
        "music song playlist",
    ),
    (
        "restaurant cafe coffee bar pub hotel museum park gym pharmacy hospital clinic dentist "
        "supermarket grocery bakery station parking atm",
        "place nearby",
    ),
    (
        "drive driving walk walking bike cycling transit bus train subway taxi traffic eta "
        "distance",
        "direction",
    ),
    ("deck slide presentation pdf photo picture image", "file document"),
    (
        "latency cpu memory ram uptime throughput p50 p90 p95 p99 slow slowness spike usage load",
        "metric monitor dashboard",
    ),
    ("grep tail syslog stdout stderr", "log search"),
    ("regression broken glitch repro bugfix", "bug issue"),
    ("colleague coworker teammate team-member headcount manager boss", "employee"),
    ("interviewer onsite offer", "candidate hire"),
    ("role position", "job"),
    ("sick", "leave"),
    ("signer signed", "sign"),
    ("repo pr merge", "code"),
    ("tests unittest flaky", "ci build"),
    ("traffic ddos bot", "firewall"),
    ("degrees temperature warmer cooler", "thermostat"),
    ("portal login signin", "website browser"),
    ("temp tmp", "local"),
    ("cname mx www", "dns"),
    ("grocery groceries errands", "todo"),
    ("sold units", "inventory"),
    ("charged card declined", "payment"),
    ("cheap cheapest cheaper", "fare"),
    ("delayed delay gate boarding departure arrival landed", "flight status"),
    ("wiki policy onboarding faq", "doc"),
    (
        "wikipedia fact facts trivia history historical invented discovered born died",
        "encyclopedia",
    ),
    ("tutorial lecture trailer watch", "video"),
    ("subscribers views", "channel statistics"),
    ("upvote karma", "subreddit"),
    ("trending", "top stories news"),
    ("mention thread emoji", "chat"),
    ("revert", "commit deploy"),
    ("postmortem retro retrospective", "doc incident"),
    ("reconcile reconciliation bank", "accounting bookkeeping"),
    ("certificate https", "dns cdn"),
    ("provision", "cloud instance"),
    ("brand", "design logo"),
    ("tell inform notify notification", "message"),
    ("election elections politics political breaking stocks", "news"),
    ("population capital gdp", "encyclopedia"),
    ("gaming gamers", "community"),
    ("turn switch", "device"),
    ("camera doorbell garage alarm", "device lock"),
    ("svg png font colour color palette frame component", "design asset"),
    ("unsubscribe spam sender", "email"),
    ("purchases sales", "order"),
    ("taxi uber cab mileage lunch dinner hotel", "expense"),
    ("row rows column columns cell cells formula pivot sum", "spreadsheet"),
    ("column columns drag", "board card"),
    ("table record row", "database"),
    # --- everyday cues per kind of service, broadened from what each kind does
    ("unread junk", "email"),
    ("rsvp doctor haircut", "appointment calendar"),
    ("fork clone hotfix changelog lint linting coverage", "code repository"),
    ("reaction react workspace", "chat"),
    ("triage blocker enhancement", "issue"),
    ("process procedure guideline rfc spec specification", "doc"),
    ("average calculate total vlookup", "spreadsheet"),
    ("dispute", "refund payment"),
    ("categorise categorize vat payable receivable", "accounting bookkeeping"),
    ("discount coupon price pricing variant collection", "product"),
    ("stakeholder", "crm contact"),
    ("complaint complaints macro", "support ticket"),
    ("typeerror nullpointer segfault panic", "error exception"),
    ("performance endpoint", "metric latency"),
    ("silence mute snooze noisy", "alert"),
    ("attack hammered spam", "firewall"),
    ("terminate region", "cloud instance"),
    ("select join", "sql query"),
    ("cohort retention funnel", "analytics"),
    ("jot", "note todo"),
    ("gantt timeline workload", "project task"),
    ("screen screens layout", "design ui"),
    ("voicemail", "phone"),
    ("unsubscribed bounce bounced", "newsletter campaign"),
    ("countersigning initial initials envelope", "sign"),
    ("exchange currency", "web search"),
    ("rename", "file"),
    ("asthmatic", "air quality"),
    ("vet veterinarian", "place nearby"),
    ("speaker speakers", "device music"),
    ("streamer creator youtuber", "video channel"),
    ("evidence clinical", "study research"),
    ("founded founder", "encyclopedia"),
    ("startup startups", "news"),
    ("followers", "profile timeline"),
    ("connection connections endorsement networking", "profile"),
    ("benefits offboarding", "hr employee"),
    ("vacuum blinds fan", "device"),
    ("nonstop non-stop", "flight"),
    # who a business owes money to is bookkeeping (accounts payable)
    ("vendor vendors supplier suppliers", "accounting bookkeeping"),
    ("dentist dental checkup physio therapist", "appointment calendar"),
    ("staging", "environment deploy cloud"),
    # questions of fact about the world
    (
        "tallest largest biggest longest highest deepest oldest smallest mountain river ocean "
        "continent planet",
        "encyclopedia",
    ),
    ("endorse", "profile"),
    ("churn churned cancellation cancellations", "subscription"),
    ("bedroom kitchen hallway basement porch", "smarthome device"),
    ("treaty war battle empire dynasty revolution", "encyclopedia history"),
    ("preview previews", "deploy"),
    ("tag tags", "release commit"),
    ("confirmation confirmations", "email"),
    ("typo typos", "bug issue"),
)

ABBREVIATIONS: tuple[tuple[str, str], ...] = (
    ("pr", "pull request"),
    ("prs", "pull request"),
    ("mr", "merge request"),
    ("mrs", "merge request"),
    ("ci", "continuous integration pipeline"),
    ("cd", "continuous deployment"),
    ("kb", "knowledge base"),
    ("pto", "paid time off"),
    ("ooo", "out of office vacation"),
    ("wfh", "remote working"),
    ("aqi", "air quality index"),
    ("dm", "direct message"),
    ("dms", "direct message"),
    ("env", "environment variable"),
    ("k8s", "kubernetes cluster"),
    ("hn", "hacker news"),
    ("eta", "estimated arrival time"),
    ("okr", "objective goal"),
    ("okrs", "objective goal"),
    ("kpi", "metric"),
    ("kpis", "metric"),
    ("sla", "service level"),
    ("p&l", "profit loss"),
    ("pnl", "profit loss"),
    ("1:1", "one-on-one meeting"),
    ("qa", "quality testing"),
    ("db", "database"),
    ("vm", "virtual machine"),
    ("ec2", "instance"),
    ("s3", "bucket storage"),
    ("ssl", "certificate"),
    ("tls", "certificate"),
    ("ip", "network firewall"),
    ("ac", "air conditioning thermostat"),
    ("tv", "television device"),
    ("ml", "machine learning research"),
    ("llm", "language model research"),
    ("llms", "language model research"),
    ("nlp", "language processing research"),
    ("seo", "search ranking website"),
    ("hr", "human resources"),
    ("cv", "resume"),
    ("nda", "non-disclosure agreement"),
    ("sms", "text message"),
    ("eod", "end of day"),
    ("appt", "appointment"),
    ("appts", "appointment"),
    ("mtg", "meeting"),
    ("mtgs", "meeting"),
    ("cal", "calendar"),
    ("msg", "message"),
    ("msgs", "message"),
    ("eng", "engineering"),
    ("acct", "account"),
    ("mgr", "manager"),
    ("dept", "department"),
    ("repro", "reproduce bug"),
    ("perf", "performance"),
    ("prod", "production"),
    ("infra", "infrastructure"),
    ("auth", "authentication login"),
    ("fwd", "forward email"),
    ("subs", "subscription subscriber"),
    ("wk", "week"),
    ("wks", "week"),
    ("tmrw", "tomorrow"),
    ("tmr", "tomorrow"),
    ("opp", "opportunity deal"),
    ("opps", "opportunity deal"),
    ("pg", "postgres database"),
    ("prd", "product requirements document"),
    ("prds", "product requirements document"),
    ("tldr", "summary"),
)

PHRASES: tuple[tuple[str, str], ...] = (
    # accounting, not spreadsheets or reading
    ("balance sheet", "accounting report"),
    ("the books", "bookkeeping"),
    ("profit and loss", "profit loss accounting"),
    ("cash flow", "accounting"),
    ("tax return", "tax accounting"),
    # expenses, not reporting in general
    ("expense report", "expense"),
    ("expense reports", "expense"),
    # the org chart, not a report document
    ("reports to", "manager employee directory"),
    ("report to", "manager employee directory"),
    ("direct reports", "manager employee directory"),
    ("org chart", "employee directory"),
    ("who works", "employee directory"),
    # leave
    ("time off", "timeoff"),
    ("day off", "timeoff"),
    ("days off", "timeoff"),
    ("out of office", "timeoff"),
    ("sick day", "timeoff"),
    ("week off", "timeoff"),
    ("morning off", "timeoff"),
    ("afternoon off", "timeoff"),
    ("monday off", "timeoff"),
    ("tuesday off", "timeoff"),
    ("wednesday off", "timeoff"),
    ("thursday off", "timeoff"),
    ("friday off", "timeoff"),
    ("sick days", "timeoff"),
    ("annual leave", "timeoff"),
    # on call and paging
    ("on call", "oncall"),
    ("paged me", "incident alert"),
    ("page the", "incident alert oncall"),
    # code
    ("stack trace", "stacktrace error"),
    # "file", "log" and "raise" as verbs: to record something, not a file or a log
    ("file a", "create"),
    ("file an", "create"),
    ("log a", "create"),
    ("log an", "create"),
    ("raise a", "create"),
    ("raise an", "create"),
    ("unit tests", "ci build"),
    ("test suite", "ci build"),
    ("story points", "sprint estimate"),
    # sales and money
    ("sales pipeline", "crm deal"),
    ("credit card", "payment"),
    ("monthly plan", "subscription"),
    ("annual plan", "subscription"),
    ("paid plan", "subscription"),
    ("pricing plan", "subscription"),
    ("sold out", "inventory stock"),
    ("out of stock", "inventory stock"),
    # help desk
    ("help center", "support article"),
    ("help centre", "support article"),
    ("live chat", "support conversation"),
    # files on this machine
    ("this computer", "local"),
    ("this laptop", "local"),
    ("my computer", "local"),
    ("my laptop", "local"),
    ("home directory", "local"),
    ("home folder", "local"),
    ("desktop folder", "local"),
    ("downloads folder", "local"),
    ("documents folder", "local"),
    ("my desktop", "local"),
    ("the desktop", "local"),
    # travel and places
    ("how far", "distance directions"),
    ("get to", "directions"),
    ("get from", "directions"),
    ("drive to", "directions"),
    ("drive from", "directions"),
    ("driving to", "directions"),
    ("walk to", "directions"),
    ("walk from", "directions"),
    ("cycle to", "directions"),
    ("commute to", "directions"),
    ("walking distance", "nearby"),
    ("claim back", "reimburse expense"),
    ("get reimbursed", "reimburse expense"),
    ("shared folder", "shared file storage"),
    ("shared drive", "shared file storage"),
    ("open roles", "job opening"),
    ("open role", "job opening"),
    ("open positions", "job opening"),
    ("open position", "job opening"),
    ("near me", "nearby"),
    ("around here", "nearby"),
    # everything the sky does
    ("air quality", "air quality pollution"),
    ("go outside", "outdoors"),
    ("smart home", "smarthome"),
    ("turn on", "turn device"),
    ("turn off", "turn device"),
    ("switch on", "turn device"),
    ("switch off", "turn device"),
    # social
    ("work history", "profile"),
    ("job title", "profile"),
    # tasks done
    ("tick off", "complete task"),
    ("cross off", "complete task"),
    ("check off", "complete task"),
    ("mark done", "complete task"),
    ("mark as done", "complete task"),
    ("mark * done", "complete task"),
    ("mark * as done", "complete task"),
    ("mark * complete", "complete task"),
    # telling someone
    ("let * know", "tell message"),
    ("get back to", "reply"),
    # dns records by type
    ("an a record", "dns record"),
    ("aaaa record", "dns record"),
    ("cname record", "dns record"),
    ("mx record", "dns record"),
    ("txt record", "dns record"),
    # people
    ("manager of", "manager employee directory"),
    ("who manages", "manager employee directory"),
    # timeliness of a trip
    ("on time", "delay status"),
    # news
    ("the latest on", "news"),
    # outages
    ("goes down", "outage incident"),
    ("went down", "outage incident"),
    ("is down", "outage incident"),
    ("are down", "outage incident"),
    ("was down", "outage incident"),
    ("were down", "outage incident"),
    ("been down", "outage incident"),
    ("be down", "outage incident"),
    ("went offline", "outage incident"),
    ("to production", "deploy production"),
    ("to prod", "deploy production"),
    ("shut down", "terminate stop"),
    ("when is my next", "calendar schedule"),
    ("who won", "encyclopedia web search"),
    ("career history", "profile"),
    ("shopping list", "todo list"),
    ("grocery list", "todo list"),
    ("packing list", "todo list"),
    ("in progress", "status issue board"),
    ("how long from", "directions distance"),
    ("how long to get", "directions distance"),
    ("put on some", "play music"),
    ("put on something", "play music"),
    ("living room", "smarthome device"),
    ("log my", "create record"),
    ("anything from", "email message received"),
    ("heard from", "email message received"),
    ("hear back from", "email reply"),
    ("what i sent", "email sent"),
    ("find a time", "schedule meeting availability"),
    ("find time", "schedule meeting availability"),
    ("on main", "branch commit"),
    ("into main", "merge branch"),
    ("on master", "branch commit"),
    ("into master", "merge branch"),
    ("signed up", "signup user account"),
    ("sign up", "signup user account"),
    ("sign ups", "signup user account"),
    ("google the", "web search"),
    ("google it", "web search"),
    ("google for", "web search"),
    ("how long to drive", "directions distance driving"),
    ("how long to walk", "directions distance walking"),
    ("who work at", "profile people company"),
    ("who works at", "profile people company"),
    ("reach out to", "contact message"),
    ("that works for", "availability schedule meeting"),
    ("works for me", "availability schedule meeting"),
    ("what did people say", "chat conversation message"),
    ("chat widget", "live chat support conversation"),
    ("canned reply", "support macro"),
    ("canned replies", "support macro"),
    ("canned response", "support macro"),
    ("canned responses", "support macro"),
    ("hiring pipeline", "hiring candidate"),
    ("candidate pipeline", "hiring candidate"),
    ("recruiting pipeline", "hiring candidate"),
    # cloud machines
    ("virtual machine", "vm instance"),
    ("virtual machines", "vm instance"),
    ("spin up", "provision"),
    # design
    ("hex code", "colour design"),
    ("hex codes", "colour design"),
    ("colour code", "colour design"),
    ("color code", "colour design"),
    # email kinds
    ("welcome email", "transactional email template"),
    ("password reset email", "transactional email template"),
    # travel tickets
    ("return ticket", "flight fare"),
    ("one-way ticket", "flight fare"),
    ("plane ticket", "flight fare"),
    ("plane tickets", "flight fare"),
    ("round trip", "flight fare"),
    # disk
    ("disk space", "local disk"),
    ("taking up space", "local disk"),
    ("my downloads", "local file"),
    # everyday expressions of what each kind of service does
    ("money back", "refund"),
    ("point of contact", "crm contact"),
    ("ship to production", "deploy"),
    ("go live", "deploy"),
    ("hard drive", "local disk"),
    ("hard disk", "local disk"),
    ("close to", "nearby"),
    ("rained out", "rain weather"),
    ("per diem", "expense"),
    ("open rate", "newsletter campaign"),
    ("feature request", "issue"),
    ("note to self", "todo"),
    # web
    ("look up", "lookup"),
    ("log in", "login"),
    ("log into", "login"),
    ("sign in", "login"),
    ("sign into", "login"),
    ("ip address", "ip network"),
    # questions of fact about the world
    ("who was", "encyclopedia"),
    ("who were", "encyclopedia"),
    ("when was", "encyclopedia"),
    ("when were", "encyclopedia"),
    ("what year", "encyclopedia"),
    ("who invented", "encyclopedia"),
    ("who discovered", "encyclopedia"),
    ("who wrote", "encyclopedia"),
    ("the web", "web"),
    ("this page", "webpage"),
    ("that page", "webpage"),
    ("this website", "website browser"),
    ("that website", "website browser"),
)

# Words after which a request turns to its topic: "tell Sam *that* the flight landed", "search
# the web *for* phone reviews", "email the team *about* the outage". The topic's words describe
# the content, not the service, so they count at a reduced weight.
CONTENT_MARKERS: str = "about regarding concerning saying that for re"

# "that" starts a topic only as a conjunction ("tell her that the flight landed"), which these
# words follow; before a noun it is a determiner ("block that ip address") and starts nothing.
THAT_CLAUSE_STARTS: str = "the a an i we he she it they you my our his her their there this"

# Words with several unrelated senses across services ("server" of a chat community or of a
# data centre, "sheet" of a spreadsheet or a balance sheet, "channel" of a chat or a video
# creator). Context should decide, so alone they earn a reduced weight.
POLYSEMOUS_WORDS: str = """
    server servers channel channels report reports board boards block blocks drive
    card cards page pages post posts thread threads table tables record records base bases
    space spaces story stories plan plans order orders statement key keys bucket buckets
    review reviews book books account accounts stream feed label labels status role roles
    run runs build builds release releases project projects note notes home mobile machine
    template templates object objects
"""

# Common words that rarely say which service is meant (time spans, quantities, vague verbs and
# adjectives). They keep a fraction of their weight so they can still break a tie.
WEAK_WORDS: str = """
    new old last next first latest recent current left little big small good bad best great
    quick quickly
    day days week weeks month months year years hour hours minute minutes time times today
    tomorrow tonight yesterday weekend monday tuesday wednesday thursday friday saturday
    sunday morning afternoon evening noon
    number numbers many lot lots thing things stuff way bit part kind sort people person team
    show find check see look tell know say said give put take keep set run use used try
    help start stop add update change create make remove delete open close move
    list read write view edit api summarise summarize summary
"""
