"""Demo catalogue for `manage.py seed_demo`: plain data, loaded (never computed) by the command.

Dates are fixed, in Asia/Taipei, so every seeded database is the same: past events are in 2026 (before
2026-11-29), upcoming ones in 2027. The rows are chosen so that the scenarios of the article series
have interesting answers:

- taipei + free + beginner finds several events, the first being `evt-webmcp-intro`;
- "WebMCP" finds exactly one published upcoming event, `evt-webmcp-intro` (the other WebMCP events
  are past, draft or cancelled);
- "Agent" + kaohsiung + paid + advanced finds nothing, while dropping any one of those conditions
  finds something — so an agent must ask before relaxing a filter;
- one upcoming event is full (`evt-django-code-review-hours`) and one is cancelled.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

TAIPEI = ZoneInfo("Asia/Taipei")


def taipei(text: str) -> datetime:
    """'2027-01-23 10:00' as an aware datetime in Asia/Taipei."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=TAIPEI)


ONLINE_VENUE = "線上（Google Meet，連結於活動前一天以 Email 寄出）"
YOUTUBE_VENUE = "線上直播（YouTube，報名後寄送觀看連結）"

# Accounts. `password` is set only when the account is created; None means it cannot sign in.
DEMO_USERS: list[dict] = [
    {"username": "demo", "email": "demo@example.com", "password": "demo-pass-2027"},
    {
        "username": "admin",
        "email": "admin@example.com",
        "password": "admin-pass-2027",
        "is_staff": True,
        "is_superuser": True,
    },
    {"username": "yating.lin", "email": "yating.lin@example.com", "password": None, "first_name": "雅婷"},
    {"username": "guanyu.chen", "email": "guanyu.chen@example.com", "password": None, "first_name": "冠宇"},
]

# (username, event public id): confirmed registrations. They fill the capacity-2 event.
DEMO_REGISTRATIONS: list[tuple[str, str]] = [
    ("yating.lin", "evt-django-code-review-hours"),
    ("guanyu.chen", "evt-django-code-review-hours"),
]

FREE = {"price": "free", "price_amount": None, "currency": ""}


def paid(amount: int) -> dict:
    return {"price": "paid", "price_amount": amount, "currency": "TWD"}


DEMO_EVENTS: list[dict] = [
    # ── Taipei, free, beginner: the first demo search ────────────────────────────────────────────
    {
        "public_id": "evt-webmcp-intro",
        "title": "WebMCP 入門工作坊",
        "summary": "從語意 HTML 到第一個網站 Tool。",
        "description": (
            "三個小時，從一個普通的活動搜尋表單開始：先把 HTML 寫得語意清楚，再用 "
            "document.modelContext.registerTool 註冊第一個網站 Tool，最後在 Chrome 的 WebMCP "
            "Inspector 看 Agent 怎麼呼叫它。\n\n適合會寫基本 HTML 與 JavaScript 的前端工程師、PM 與設計師。"
            "請自備筆電並安裝最新版 Chrome。"
        ),
        "starts_at": taipei("2027-01-23 10:00"),
        "ends_at": taipei("2027-01-23 13:00"),
        "location": "taipei",
        "venue": "集思台大會議中心 洛克廳（台北市大安區羅斯福路四段 85 號 B1）",
        **FREE,
        "level": "beginner",
        "capacity": 40,
        "status": "published",
    },
    {
        "public_id": "evt-python-taipei-first-django",
        "title": "Python 台北讀書會：第一次寫 Django",
        "summary": "兩個小時完成第一個 Django 專案，從 models、admin 到第一個頁面。",
        "description": (
            "讀書會由 Taipei.py 志工帶領，每三人一組互相支援。我們會建立一個小小的活動報名網站，"
            "認識 models、migrations、Django admin 與 templates。\n\n"
            "不需要 Django 經驗，會 Python 基本語法即可。"
        ),
        "starts_at": taipei("2027-02-06 14:00"),
        "ends_at": taipei("2027-02-06 17:00"),
        "location": "taipei",
        "venue": "CLBC 大稻埕共同工作空間（台北市大同區南京西路 163 號 2 樓）",
        **FREE,
        "level": "beginner",
        "capacity": 60,
        "status": "published",
    },
    {
        "public_id": "evt-a11y-keyboard-basics",
        "title": "無障礙網頁入門：從鍵盤操作開始",
        "summary": "不用滑鼠也能完成報名嗎？一起用鍵盤與螢幕報讀器檢查常見網站流程。",
        "description": (
            "無障礙不是最後才補的檢查表。這場入門工作坊從 Tab 鍵開始，檢查焦點順序、跳至主要內容連結、"
            "表單 label 與錯誤訊息，再用 NVDA 聽一次自己的網站。\n\n歡迎開發者、設計師與內容編輯一起參加。"
        ),
        "starts_at": taipei("2027-02-20 13:30"),
        "ends_at": taipei("2027-02-20 16:30"),
        "location": "taipei",
        "venue": "台北市青年職涯發展中心 多功能教室（台北市中正區延平南路 5 號）",
        **FREE,
        "level": "beginner",
        "capacity": 30,
        "status": "published",
    },
    {
        "public_id": "evt-ai-agent-101-taipei",
        "title": "AI Agent 101：讓 Agent 看懂你的網站",
        "summary": "給前端工程師與 PM 的 AI Agent 入門：Tool、Schema 與使用者確認。",
        "description": (
            "Browser Agent 會點畫面，也會呼叫網站提供的 Tool。這場分享用一個活動網站說明兩者的差別："
            "什麼功能適合變成 Tool、input schema 怎麼寫、哪些操作一定要讓使用者自己按下確認。\n\n"
            "只需要基本的網頁概念，不需要寫程式。"
        ),
        "starts_at": taipei("2027-03-13 10:00"),
        "ends_at": taipei("2027-03-13 12:00"),
        "location": "taipei",
        "venue": "台大醫院國際會議中心 402 室（台北市中正區徐州路 2 號）",
        **FREE,
        "level": "beginner",
        "capacity": 80,
        "status": "published",
    },
    {
        "public_id": "evt-semantic-forms-night",
        "title": "語意化表單實作夜",
        "summary": "label、fieldset 與錯誤訊息：讓人與瀏覽器都讀得懂的表單。",
        "description": (
            "下班後的實作夜。帶著你專案裡最難用的一個表單，現場一起重構：正確的 input type、autocomplete、"
            "群組與說明文字，以及送出失敗時該把焦點放在哪裡。"
        ),
        "starts_at": taipei("2027-03-24 19:00"),
        "ends_at": taipei("2027-03-24 21:30"),
        "location": "taipei",
        "venue": "好想工作室（台北市中正區八德路一段 1 號）",
        **FREE,
        "level": "beginner",
        "capacity": None,
        "status": "published",
    },
    # ── Taipei, other combinations ──────────────────────────────────────────────────────────────
    {
        "public_id": "evt-django-code-review-hours",
        "title": "Django 專案 Code Review 諮詢時段",
        "summary": "每場只收兩組：資深工程師陪你看 models、views 與測試。",
        "description": (
            "小班諮詢，每組 80 分鐘。請在活動前三天把專案連結寄給主辦單位，我們會先讀過程式碼，"
            "當天聚焦在資料模型、查詢效能與測試策略。"
        ),
        "starts_at": taipei("2027-02-17 19:00"),
        "ends_at": taipei("2027-02-17 21:40"),
        "location": "taipei",
        "venue": "小樹屋 台大公館館 A 會議室（台北市中正區汀州路三段 160 巷）",
        **FREE,
        "level": "intermediate",
        "capacity": 2,
        "status": "published",
    },
    {
        "public_id": "evt-django-orm-performance",
        "title": "Django ORM 效能調校實戰",
        "summary": "從 N+1 查詢到 select_related、prefetch_related 與資料庫索引。",
        "description": (
            "一整天的實作課。以一個真實規模的活動報名資料庫為例，用 django-debug-toolbar 與 EXPLAIN "
            "找出慢查詢，練習 annotate、子查詢、索引設計，並用測試鎖住查詢次數。\n\n含午餐與講義。"
        ),
        "starts_at": taipei("2027-02-27 09:30"),
        "ends_at": taipei("2027-02-27 17:00"),
        "location": "taipei",
        "venue": "集思北科大會議中心 感恩廳（台北市大安區忠孝東路三段 1 號）",
        **paid(600),
        "level": "intermediate",
        "capacity": 35,
        "status": "published",
    },
    {
        "public_id": "evt-frontend-web-vitals",
        "title": "前端效能實戰：Core Web Vitals 全面體檢",
        "summary": "用 Lighthouse 與 Chrome DevTools 找出 LCP、INP 的真正瓶頸。",
        "description": (
            "帶著你的網站來做健康檢查。課程涵蓋圖片與字型載入、長任務切割、第三方腳本治理，"
            "以及如何用 RUM 資料確認改善真的發生在使用者身上。"
        ),
        "starts_at": taipei("2027-03-06 13:00"),
        "ends_at": taipei("2027-03-06 17:00"),
        "location": "taipei",
        "venue": "FutureWard 未來產房（台北市中山區長安西路 40 號 2 樓）",
        **paid(800),
        "level": "intermediate",
        "capacity": 40,
        "status": "published",
    },
    {
        "public_id": "evt-agent-security-prompt-injection",
        "title": "AI Agent 安全工作坊：Prompt Injection 攻防",
        "summary": "把不可信內容當資料而不是指令：實作 Agent 的權限邊界與使用者確認。",
        "description": (
            "進階實作課。我們會攻擊一個會讀網頁、會呼叫 Tool 的 Agent，再一步步加上防線："
            "untrusted content 標記、最小權限 Tool、需要人確認的 consequential 操作與稽核紀錄。\n\n"
            "需要熟悉 Python 或 JavaScript，以及 LLM API 的基本使用。"
        ),
        "starts_at": taipei("2027-04-17 09:30"),
        "ends_at": taipei("2027-04-17 17:30"),
        "location": "taipei",
        "venue": "台北國際會議中心 201 會議室（台北市信義區信義路五段 1 號）",
        **paid(1200),
        "level": "advanced",
        "capacity": 24,
        "status": "published",
    },
    {
        "public_id": "evt-github-actions-advanced",
        "title": "GitHub Actions 持續整合進階技巧",
        "summary": "矩陣測試、快取與部署保護規則，讓 CI 又快又可靠。",
        "description": (
            "從一條跑 25 分鐘的 pipeline 開始，逐步拆成可平行的 jobs，加入相依快取、reusable workflows、"
            "OIDC 部署與環境保護規則。適合已經在用 GitHub Actions 的團隊。"
        ),
        "starts_at": taipei("2027-05-22 13:00"),
        "ends_at": taipei("2027-05-22 18:00"),
        "location": "taipei",
        "venue": "Google 台灣辦公室 101 大樓 73 樓 活動區（台北市信義區信義路五段 7 號）",
        **paid(1000),
        "level": "advanced",
        "capacity": 50,
        "status": "published",
    },
    {
        "public_id": "evt-design-system-components",
        "title": "設計系統與前端元件庫小聚",
        "summary": "從 Figma 到程式碼：設計 token、元件文件與無障礙驗收流程。",
        "description": (
            "三位講者分享各自公司的設計系統演進：怎麼決定元件邊界、如何讓設計師與工程師共用 token，"
            "以及把無障礙檢查放進元件的測試。會後有交流時間。"
        ),
        "starts_at": taipei("2027-06-12 14:00"),
        "ends_at": taipei("2027-06-12 17:00"),
        "location": "taipei",
        "venue": "三創生活園區 12 樓 Clapper Studio（台北市中正區市民大道三段 2 號）",
        **FREE,
        "level": "intermediate",
        "capacity": 120,
        "status": "published",
    },
    # ── Kaohsiung ───────────────────────────────────────────────────────────────────────────────
    {
        "public_id": "evt-kaohsiung-python-meetup-2027-01",
        "title": "高雄 Python 社群聚會（一月場）",
        "summary": "新年第一場聚會：兩場短講加上新手提問時間。",
        "description": (
            "Kaohsiung.py 每月聚會。本月短講：「用 Python 整理港口貨櫃開放資料」與「pytest 入門十招」。"
            "第一次來也沒關係，講完後有新手提問時間。"
        ),
        "starts_at": taipei("2027-01-30 14:00"),
        "ends_at": taipei("2027-01-30 17:00"),
        "location": "kaohsiung",
        "venue": "高雄軟體科技園區 研發大樓 2 樓會議室（高雄市前鎮區復興四路 2 號）",
        **FREE,
        "level": "beginner",
        "capacity": 50,
        "status": "published",
    },
    {
        "public_id": "evt-kaohsiung-a11y-wcag",
        "title": "前端無障礙實務（高雄場）",
        "summary": "WCAG 2.2 重點整理，以及對話框、選單、分頁元件的修正示範。",
        "description": (
            "針對已經寫過前端元件的工程師：逐一檢查對話框焦點管理、選單的鍵盤操作與 ARIA 屬性，"
            "並示範如何把檢查寫進自動化測試。"
        ),
        "starts_at": taipei("2027-02-27 13:30"),
        "ends_at": taipei("2027-02-27 17:00"),
        "location": "kaohsiung",
        "venue": "駁二藝術特區 大義倉庫 C7-2（高雄市鹽埕區大義街 2-2 號）",
        **FREE,
        "level": "intermediate",
        "capacity": 40,
        "status": "published",
    },
    {
        "public_id": "evt-kaohsiung-agent-workflow",
        "title": "AI Agent 自動化流程實作（高雄場）",
        "summary": "用 Python 串接 LLM 與內部 API，設計可驗收、可重跑的 Agent 工作流程。",
        "description": (
            "半天實作課。從一個客服工單分類流程開始，把 LLM 呼叫、工具呼叫與人工確認拆成明確步驟，"
            "加上重試、逾時與紀錄，讓流程出錯時知道該怎麼處理。"
        ),
        "starts_at": taipei("2027-03-20 13:00"),
        "ends_at": taipei("2027-03-20 17:30"),
        "location": "kaohsiung",
        "venue": "高雄市立圖書館總館 8 樓國際會議廳（高雄市前鎮區新光路 61 號）",
        **paid(1500),
        "level": "intermediate",
        "capacity": 45,
        "status": "published",
    },
    {
        "public_id": "evt-kaohsiung-agent-evals",
        "title": "Agent Evals 研討會：怎麼驗收一個 Agent",
        "summary": "從 trace 到評分標準，建立可重跑、可追溯版本的 Agent 評測。",
        "description": (
            "進階研討。討論情境題庫的設計、固定版本座標、模型選擇行為與副作用的分開驗收，"
            "以及零結果時 Agent 是否擅自放寬條件這類「看起來成功」的失敗。"
        ),
        "starts_at": taipei("2027-04-24 14:00"),
        "ends_at": taipei("2027-04-24 17:30"),
        "location": "kaohsiung",
        "venue": "國立中山大學 管理學院 國際會議廳（高雄市鼓山區蓮海路 70 號）",
        **FREE,
        "level": "advanced",
        "capacity": 100,
        "status": "published",
    },
    {
        "public_id": "evt-kaohsiung-kubernetes-operations",
        "title": "Kubernetes 進階維運實戰（高雄場）",
        "summary": "多叢集部署、觀測與災難復原演練，一整天動手做。",
        "description": (
            "每位學員一組雲端叢集。課程包含 GitOps 部署、Prometheus 與 OpenTelemetry 觀測、"
            "節點故障與資料還原演練。需要熟悉 kubectl 與容器基本概念。\n\n含午餐。"
        ),
        "starts_at": taipei("2027-05-15 09:00"),
        "ends_at": taipei("2027-05-15 18:00"),
        "location": "kaohsiung",
        "venue": "高雄展覽館 3 樓 301 會議室（高雄市前鎮區成功二路 39 號）",
        **paid(3500),
        "level": "advanced",
        "capacity": 20,
        "status": "published",
    },
    {
        "public_id": "evt-kaohsiung-postgresql-query-plans",
        "title": "PostgreSQL 查詢計畫深度解析",
        "summary": "讀懂 EXPLAIN ANALYZE，調校索引、分割表與鎖的等待。",
        "description": (
            "給每天和資料庫打交道的後端工程師。以真實的慢查詢為教材，拆解 planner 的選擇、"
            "統計資訊、partial index 與 row lock 競爭，最後練習在正式環境安全地加索引。"
        ),
        "starts_at": taipei("2027-06-05 09:30"),
        "ends_at": taipei("2027-06-05 17:00"),
        "location": "kaohsiung",
        "venue": "高雄軟體科技園區 研發大樓 2 樓會議室（高雄市前鎮區復興四路 2 號）",
        **paid(2800),
        "level": "advanced",
        "capacity": 30,
        "status": "published",
    },
    {
        "public_id": "evt-kaohsiung-rust-systems",
        "title": "Rust 系統程式設計進階班",
        "summary": "所有權、async runtime 與 unsafe 的正確使用時機。",
        "description": (
            "兩天課程的第一天。實作一個小型的網路服務，深入 trait 設計、async 與 tokio、"
            "FFI 與 unsafe 的審查方法。需要寫過 Rust 或熟悉 C/C++。"
        ),
        "starts_at": taipei("2027-07-10 09:30"),
        "ends_at": taipei("2027-07-10 17:30"),
        "location": "kaohsiung",
        "venue": "亞灣新創園 4 樓教室（高雄市前鎮區復興四路 8 號）",
        **paid(3000),
        "level": "advanced",
        "capacity": 25,
        "status": "published",
    },
    # ── Online ──────────────────────────────────────────────────────────────────────────────────
    {
        "public_id": "evt-screen-reader-live",
        "title": "螢幕報讀器實測直播",
        "summary": "NVDA 與 VoiceOver 操作示範：聽聽你的網站怎麼被念出來。",
        "description": (
            "一小時直播，由視障使用者與前端工程師一起示範常見網站的操作，觀眾可以即時提交網址請我們測試。"
        ),
        "starts_at": taipei("2027-01-27 20:00"),
        "ends_at": taipei("2027-01-27 21:00"),
        "location": "online",
        "venue": YOUTUBE_VENUE,
        **FREE,
        "level": "beginner",
        "capacity": None,
        "status": "published",
    },
    {
        "public_id": "evt-site-tool-design-qa",
        "title": "網站 Tool 設計 Q&A（線上）",
        "summary": "名稱、描述與 input schema 怎麼寫，Agent 才會選對 Tool？",
        "description": (
            "帶著你的 Tool 定義來，現場一起看：名稱是否描述使用者的任務、描述裡有沒有混入使用者資料、"
            "schema 是否用 enum 與 additionalProperties 限制輸入。"
        ),
        "starts_at": taipei("2027-02-03 20:00"),
        "ends_at": taipei("2027-02-03 21:30"),
        "location": "online",
        "venue": ONLINE_VENUE,
        **FREE,
        "level": "intermediate",
        "capacity": 100,
        "status": "published",
    },
    {
        "public_id": "evt-agent-ux-confirmation",
        "title": "AI Agent 與 UX：哪些操作該讓人按下最後一個按鈕",
        "summary": "報名、付款、取消：設計 Agent 填表、使用者確認的互動流程。",
        "description": (
            "進階線上講座。整理 consequential 操作的設計模式：Agent 只填表不送出、確認畫面該顯示什麼、"
            "使用者拒絕後 Agent 應該怎麼回應，以及如何在紀錄中區分人與 Agent 的操作。"
        ),
        "starts_at": taipei("2027-03-03 20:00"),
        "ends_at": taipei("2027-03-03 22:00"),
        "location": "online",
        "venue": ONLINE_VENUE,
        **paid(500),
        "level": "advanced",
        "capacity": 200,
        "status": "published",
    },
    {
        "public_id": "evt-python-typing-in-practice",
        "title": "Python 型別提示實戰",
        "summary": "從 mypy 到 pyright：在既有專案逐步導入型別檢查。",
        "description": (
            "分享一個十萬行 Django 專案導入型別的過程：從哪裡開始、如何處理第三方套件、"
            "CI 裡的漸進式嚴格度設定，以及型別真正抓到的錯誤。"
        ),
        "starts_at": taipei("2027-03-10 20:00"),
        "ends_at": taipei("2027-03-10 21:30"),
        "location": "online",
        "venue": YOUTUBE_VENUE,
        **FREE,
        "level": "intermediate",
        "capacity": None,
        "status": "published",
    },
    {
        "public_id": "evt-htmx-django-templates",
        "title": "htmx 與 Django Templates：不寫 SPA 的互動介面",
        "summary": "partial template、hx-swap 與漸進增強，一晚學會。",
        "description": (
            "新手友善的線上實作。用 Django 6 的 template partials 與 htmx 做出即時搜尋、分頁與收藏按鈕，"
            "並確認關掉 JavaScript 時頁面仍然可用。"
        ),
        "starts_at": taipei("2027-04-07 20:00"),
        "ends_at": taipei("2027-04-07 22:00"),
        "location": "online",
        "venue": ONLINE_VENUE,
        **paid(300),
        "level": "beginner",
        "capacity": 150,
        "status": "published",
    },
    {
        "public_id": "evt-llm-rag-basics",
        "title": "LLM 應用開發：RAG 實作入門",
        "summary": "向量檢索、切段策略與回答品質評估，一次走完。",
        "description": (
            "以政府開放資料為例，建立一個可以引用來源的問答服務。內容包含文件切段、embedding、"
            "混合檢索與簡單的離線評估。需要會基本 Python。"
        ),
        "starts_at": taipei("2027-05-05 19:30"),
        "ends_at": taipei("2027-05-05 21:30"),
        "location": "online",
        "venue": ONLINE_VENUE,
        **paid(600),
        "level": "beginner",
        "capacity": 300,
        "status": "published",
    },
    # ── Cancelled and draft: visible to organisers, never in search ─────────────────────────────
    {
        "public_id": "evt-pycon-tw-warmup",
        "title": "PyCon Taiwan 會前暖身聚",
        "summary": "講者排練與新手友善的閃電講之夜。",
        "description": "因場地維修，本場活動取消。已報名的朋友會收到 Email 通知，感謝大家的支持。",
        "starts_at": taipei("2027-03-27 14:00"),
        "ends_at": taipei("2027-03-27 17:00"),
        "location": "taipei",
        "venue": "中央研究院 人文社會科學館 第二會議室（台北市南港區研究院路二段 128 號）",
        **FREE,
        "level": "beginner",
        "capacity": 80,
        "status": "cancelled",
    },
    {
        "public_id": "evt-webmcp-declarative-forms",
        "title": "WebMCP 進階：宣告式表單與使用者確認",
        "summary": "toolname、toolautosubmit 與 consequential 操作的實作細節。",
        "description": "草稿：講者與場地確認中。內容延續 WebMCP 入門工作坊，改用宣告式 form 註冊 Tool。",
        "starts_at": taipei("2027-06-26 13:00"),
        "ends_at": taipei("2027-06-26 17:00"),
        "location": "taipei",
        "venue": "集思台大會議中心 洛克廳（台北市大安區羅斯福路四段 85 號 B1）",
        **paid(1500),
        "level": "advanced",
        "capacity": 40,
        "status": "draft",
    },
    # ── Past (2026) ─────────────────────────────────────────────────────────────────────────────
    {
        "public_id": "evt-kaohsiung-web-security-2026",
        "title": "網站資安攻防演練（高雄場）",
        "summary": "OWASP Top 10 實戰：注入、權限繞過與 CSRF 的攻擊與修補。",
        "description": "CTF 形式的一日演練，分組攻擊一個刻意留下漏洞的報名網站，下午逐題修補並撰寫測試。",
        "starts_at": taipei("2026-08-22 09:00"),
        "ends_at": taipei("2026-08-22 17:30"),
        "location": "kaohsiung",
        "venue": "高雄軟體科技園區 研發大樓 2 樓會議室（高雄市前鎮區復興四路 2 號）",
        **paid(2000),
        "level": "advanced",
        "capacity": 30,
        "status": "published",
    },
    {
        "public_id": "evt-kaohsiung-ai-agent-meetup-2026",
        "title": "高雄 AI Agent 社群小聚 2026",
        "summary": "在地團隊分享 AI Agent 導入經驗：客服、排程與內部工具。",
        "description": "三段 20 分鐘分享與開放討論。投影片已整理在社群共筆。",
        "starts_at": taipei("2026-09-19 14:00"),
        "ends_at": taipei("2026-09-19 17:00"),
        "location": "kaohsiung",
        "venue": "駁二藝術特區 大義倉庫 C7-2（高雄市鹽埕區大義街 2-2 號）",
        **FREE,
        "level": "intermediate",
        "capacity": 60,
        "status": "published",
    },
    {
        "public_id": "evt-webmcp-study-group-1",
        "title": "WebMCP 讀書會 #1：規格導讀",
        "summary": "一起讀 WebMCP 提案：registerTool、annotations 與安全考量。",
        "description": "第一次讀書會的錄影與筆記已公開。下一場請見 WebMCP 入門工作坊。",
        "starts_at": taipei("2026-10-14 20:00"),
        "ends_at": taipei("2026-10-14 21:30"),
        "location": "online",
        "venue": ONLINE_VENUE,
        **FREE,
        "level": "beginner",
        "capacity": None,
        "status": "published",
    },
    {
        "public_id": "evt-django-girls-taipei-2026",
        "title": "Django Girls 台北 2026 秋季工作坊",
        "summary": "一天時間，從零開始做出自己的部落格網站。",
        "description": "感謝 40 位學員與 15 位教練的參與！下一場報名資訊將在社群公告。",
        "starts_at": taipei("2026-10-24 09:00"),
        "ends_at": taipei("2026-10-24 17:00"),
        "location": "taipei",
        "venue": "國立臺灣大學 博雅教學館 301 教室（台北市大安區羅斯福路四段 1 號）",
        **FREE,
        "level": "beginner",
        "capacity": 40,
        "status": "published",
    },
    {
        "public_id": "evt-frontend-performance-2026",
        "title": "前端效能調校工作坊 2026",
        "summary": "圖片、字型與 JavaScript 體積：一個下午讓首頁快一倍。",
        "description": "課後講義與範例程式碼已寄給學員。2027 年的進階場次請見「Core Web Vitals 全面體檢」。",
        "starts_at": taipei("2026-11-07 13:00"),
        "ends_at": taipei("2026-11-07 17:00"),
        "location": "taipei",
        "venue": "FutureWard 未來產房（台北市中山區長安西路 40 號 2 樓）",
        **paid(1200),
        "level": "intermediate",
        "capacity": 40,
        "status": "published",
    },
]

# ── Registration questions and approval ───────────────────────────────────────────────────────
# Per event, in order: the organisers' questions (labels in zh-Hant and English; choice questions with
# their options; `show_if` names an earlier question of the same event and the values that show it).

#: Events whose organisers approve each registration (the seat is held until they decide).
DEMO_APPROVAL: list[str] = ["evt-frontend-web-vitals"]


def _option(identifier: str, zh: str, en: str) -> dict:
    return {"identifier": identifier, "label_zh_hant": zh, "label_en": en}


DEMO_QUESTIONS: dict[str, list[dict]] = {
    # A conference afternoon: dietary need (required, shown at the door), a conditional detail, and
    # a photo consent.
    "evt-design-system-components": [
        {
            "identifier": "dietary_need",
            "kind": "single_choice",
            "required": True,
            "show_at_door": True,
            "label_zh_hant": "餐點需求",
            "label_en": "Dietary need",
            "options": [
                _option("none", "一般", "None"),
                _option("vegetarian", "素食", "Vegetarian"),
                _option("other", "其他（請說明）", "Other (please say)"),
            ],
        },
        {
            "identifier": "dietary_other",
            "kind": "text",
            "required": True,
            "max_length": 100,
            "label_zh_hant": "請說明您的餐點需求",
            "label_en": "Please describe your dietary need",
            "show_if": ("dietary_need", ["other"]),
        },
        {
            "identifier": "photo_consent",
            "kind": "consent",
            "label_zh_hant": "我同意活動中可能被拍攝並用於活動紀錄",
            "label_en": "I agree to be photographed for the event's record",
        },
    ],
    # A workshop: T-shirt size at the door, company (optional), and the topics to cover.
    "evt-llm-rag-basics": [
        {
            "identifier": "tshirt_size",
            "kind": "single_choice",
            "required": True,
            "show_at_door": True,
            "label_zh_hant": "T 恤尺寸",
            "label_en": "T-shirt size",
            "options": [
                _option("s", "S", "S"),
                _option("m", "M", "M"),
                _option("l", "L", "L"),
                _option("xl", "XL", "XL"),
            ],
        },
        {
            "identifier": "company",
            "kind": "text",
            "label_zh_hant": "公司或學校",
            "label_en": "Company or school",
            "max_length": 100,
        },
        {
            "identifier": "topics",
            "kind": "multi_choice",
            "label_zh_hant": "最想深入的主題",
            "label_en": "Topics you most want covered",
            "options": [
                _option("chunking", "切段策略", "Chunking"),
                _option("retrieval", "混合檢索", "Hybrid retrieval"),
                _option("evaluation", "離線評估", "Offline evaluation"),
            ],
        },
    ],
    # An online talk: Python experience (required), and whether they use type checkers, then which one.
    "evt-python-typing-in-practice": [
        {
            "identifier": "python_years",
            "kind": "number",
            "required": True,
            "min_value": 0,
            "max_value": 60,
            "label_zh_hant": "使用 Python 幾年？",
            "label_en": "Years of Python",
        },
        {
            "identifier": "uses_type_checker",
            "kind": "boolean",
            "label_zh_hant": "目前有使用型別檢查工具嗎？",
            "label_en": "Do you use a type checker today?",
        },
        {
            "identifier": "type_checker",
            "kind": "single_choice",
            "required": True,
            "label_zh_hant": "哪一個？",
            "label_en": "Which one?",
            "show_if": ("uses_type_checker", [True]),
            "options": [
                _option("mypy", "mypy", "mypy"),
                _option("pyright", "pyright", "pyright"),
                _option("other", "其他", "Other"),
            ],
        },
    ],
    # The approval event asks why they want to come.
    "evt-frontend-web-vitals": [
        {
            "identifier": "motivation",
            "kind": "long_text",
            "required": True,
            "max_length": 500,
            "label_zh_hant": "想參加的原因",
            "label_en": "Why you would like to come",
        },
    ],
}


# ── paid registrations ────────────────────────────────────────────────────────────────────────

#: Two paid events with an early bird, a student and a regular ticket type on one seat pool; the
#: first also takes payment at the door. Their payment codes are printed before each reference.
DEMO_PAYMENT_EVENTS: dict[str, dict] = {
    "evt-django-orm-performance": {
        "payment_code": "ORM27",
        "at_door": True,
        "pending_may_pay_at_door": True,
    },
    "evt-agent-security-prompt-injection": {"payment_code": "AGENTSEC"},
}
DEMO_TICKET_TYPES: dict[str, list[dict]] = {
    "evt-django-orm-performance": [
        {
            "identifier": "early_bird",
            "name_zh_hant": "早鳥票",
            "name_en": "Early bird",
            "price": 900,
            "sales_end": taipei("2027-01-31 23:59"),
        },
        {"identifier": "student", "name_zh_hant": "學生票", "name_en": "Student", "price": 600, "cap": 10},
        {"identifier": "regular", "name_zh_hant": "一般票", "name_en": "Regular", "price": 1200},
    ],
    "evt-agent-security-prompt-injection": [
        {
            "identifier": "early_bird",
            "name_zh_hant": "早鳥票",
            "name_en": "Early bird",
            "price": 1800,
            "sales_end": taipei("2027-03-01 23:59"),
        },
        {"identifier": "student", "name_zh_hant": "學生票", "name_en": "Student", "price": 1200, "cap": 5},
        {"identifier": "regular", "name_zh_hant": "一般票", "name_en": "Regular", "price": 2500},
    ],
}
#: (username, event, ticket type, reference): registrations waiting for their bank transfer, held until
#: the event's last payment time, with fixed references so that events/fixtures/sample-bank-statement.csv
#: pays them (the first in full, the second short by TWD 200).
DEMO_PENDING_PAYMENTS: list[tuple[str, str, str, str]] = [
    ("yating.lin", "evt-django-orm-performance", "early_bird", "K7M2QX"),
    ("guanyu.chen", "evt-agent-security-prompt-injection", "student", "P4WZ8N"),
]
